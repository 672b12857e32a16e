//! The `models` section: providers, their endpoints, auth and models.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The `models` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelsConfig {
    /// Providers by id (the part of a model ref before the first `/`).
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
}

/// The wire API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApiKind {
    /// OpenAI Chat Completions (`POST {baseUrl}/chat/completions`), and compatible servers.
    OpenaiCompletions,
    /// OpenAI Responses (`POST {baseUrl}/responses`).
    OpenaiResponses,
    /// Anthropic Messages (`POST {baseUrl}/v1/messages`).
    AnthropicMessages,
    /// The offline scripted provider (no network).
    Scripted,
}

impl ApiKind {
    /// The name used in config files.
    pub fn name(self) -> &'static str {
        match self {
            ApiKind::OpenaiCompletions => "openai-completions",
            ApiKind::OpenaiResponses => "openai-responses",
            ApiKind::AnthropicMessages => "anthropic-messages",
            ApiKind::Scripted => "scripted",
        }
    }
}

/// One provider.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfig {
    /// Endpoint base URL, e.g. `https://api.openai.com/v1`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Wire API.
    pub api: ApiKind,
    /// API key given literally (prefer `apiKeyEnv`).
    #[serde(default)]
    pub api_key: Option<String>,
    /// Name of the environment variable that holds the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Models this provider serves.
    #[serde(default)]
    pub models: Vec<ModelConfig>,
    /// Request-body params merged into every request (e.g. `temperature`).
    #[serde(default)]
    pub params: Map<String, Value>,
    /// Retry policy.
    #[serde(default)]
    pub retry: RetryConfig,
    /// Abort a stream that sends nothing for this long, in milliseconds
    /// (keep-alive comment lines count as something).
    #[serde(default = "default_idle_ms")]
    pub stream_idle_timeout_ms: u64,
    /// Give up on an attempt whose response headers have not come within
    /// this long, in milliseconds (then retried like a transport error).
    #[serde(default = "default_response_ms")]
    pub response_timeout_ms: u64,
    /// Whole-request deadline (every attempt and the stream), in milliseconds.
    #[serde(default = "default_request_ms")]
    pub request_timeout_ms: u64,
    /// Path of a scripted provider's script (for `api: scripted`).
    #[serde(default)]
    pub script: Option<std::path::PathBuf>,
    /// Runtime policy at provider scope.
    #[serde(default)]
    pub agent_runtime: Option<crate::RuntimePolicy>,
}

fn default_idle_ms() -> u64 {
    60_000
}
fn default_response_ms() -> u64 {
    120_000
}
fn default_request_ms() -> u64 {
    600_000
}

/// One model of a provider.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelConfig {
    /// Model id as the provider knows it.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Context window in tokens.
    #[serde(default = "default_context_window")]
    pub context_window: u64,
    /// Output token limit.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u64,
    /// Input kinds (`text`, `image`).
    #[serde(default = "default_input")]
    pub input: Vec<String>,
    /// Request-body params for this model, merged over the provider's
    /// (e.g. `{"service_tier": "flex"}` or `{"extra_body": {...}}`).
    #[serde(default)]
    pub params: Map<String, Value>,
    /// Runtime policy at model scope (wins over the provider's).
    #[serde(default)]
    pub agent_runtime: Option<crate::RuntimePolicy>,
}

fn default_context_window() -> u64 {
    128_000
}
fn default_max_tokens() -> u64 {
    4_096
}
fn default_input() -> Vec<String> {
    vec!["text".into()]
}

/// Retries on 429, 5xx and transport errors.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetryConfig {
    /// Attempts in all (1 = no retry).
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// First backoff, in milliseconds; doubles each attempt, with jitter.
    #[serde(default = "default_base_delay")]
    pub base_delay_ms: u64,
    /// Longest wait between attempts (also caps `retry-after`), in milliseconds.
    #[serde(default = "default_max_delay")]
    pub max_delay_ms: u64,
}

fn default_attempts() -> u32 {
    4
}
fn default_base_delay() -> u64 {
    500
}
fn default_max_delay() -> u64 {
    30_000
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: default_attempts(),
            base_delay_ms: default_base_delay(),
            max_delay_ms: default_max_delay(),
        }
    }
}
