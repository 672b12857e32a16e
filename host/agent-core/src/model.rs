//! The contract between the loop and whatever plays the model.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::{Reasoning, SharedMessage, ToolCallRequest, ToolSpec};

/// Where a streamed reply's text goes as it arrives.
#[derive(Clone)]
pub struct TextSink(std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl TextSink {
    /// A sink calling `f` with each piece of reply text.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(f))
    }

    /// Hand on one piece of reply text.
    pub fn send(&self, text: &str) {
        (self.0)(text)
    }
}

impl std::fmt::Debug for TextSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextSink")
    }
}

impl PartialEq for TextSink {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// Model reference, `provider/model`.
    pub model_ref: String,
    /// System prompt.
    pub system: Option<String>,
    /// The conversation so far. Shared with the session's history: a
    /// request copies pointers, never the messages.
    pub messages: Vec<SharedMessage>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Receives the reply text as it streams, when set.
    pub text_sink: Option<TextSink>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Finished its answer.
    EndTurn,
    /// Wants tool results.
    ToolUse,
    /// Hit the output token limit: the reply is cut off.
    MaxTokens,
    /// Declined to answer (OpenAI `refusal`, Anthropic `stop_reason:
    /// "refusal"`): the reply text is the refusal.
    Refusal,
    /// Stopped by a content filter or for another provider reason.
    Other,
}

/// Token usage of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, as the provider counts them (OpenAI's include the
    /// cached ones; Anthropic's are the tokens neither read from nor written
    /// to its cache).
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's prompt cache (OpenAI
    /// `cached_tokens`, Anthropic `cache_read_input_tokens`).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache (Anthropic
    /// `cache_creation_input_tokens`).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Add another call's usage to this sum.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// A complete model reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Reply text.
    pub text: String,
    /// Tool calls requested.
    pub tool_calls: Vec<ToolCallRequest>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Token usage, when the provider reports it.
    pub usage: Usage,
    /// The reasoning the provider returned before the reply.
    pub reasoning: Vec<Reasoning>,
}

/// What kind of failure a model call hit; the loop acts on some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelErrorKind {
    /// Credentials missing or refused (401/403).
    Auth,
    /// The model id is not known to the provider.
    UnknownModel,
    /// The prompt does not fit the model's context window.
    ContextOverflow,
    /// Rate limited, after retries.
    RateLimited,
    /// Other 4xx: the request itself is wrong.
    BadRequest,
    /// 5xx or transport failure, after retries.
    Unavailable,
    /// The stream stalled past the idle timeout.
    Timeout,
    /// The provider sent something that does not parse.
    Protocol,
    /// A hook whose fail policy is `block` failed around the call.
    HookBlocked,
    /// Anything else (configuration, scripted provider exhausted …).
    Other,
}

/// A failed model call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct ModelError {
    /// Category the loop can act on.
    pub kind: ModelErrorKind,
    /// Human-readable detail (never contains credentials).
    pub message: String,
}

impl ModelError {
    /// A model error of a kind with a message.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// A hook whose fail policy is `block` failed around the call; `reason`
    /// names the hook and the plugin.
    pub fn hook_blocked(reason: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::HookBlocked, reason)
    }
}

/// Something that answers model requests: a transport to a provider, or the
/// scripted offline provider.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Send one request and return the complete reply.
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError>;
}
