//! The contract between the loop and tool execution.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::{Approvals, EventSink, ToolCallRequest};

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of the parameters: shared, so the tool list each model
    /// request carries costs no copy of the schemas.
    pub parameters: std::sync::Arc<serde_json::Value>,
}

/// Why a tool call failed (the plugin API's `tool-error`); what it displays
/// is what the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The parameters passed the schema but cannot be used (a path outside
    /// the tool's reach, a pattern that does not compile).
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// [`ToolError::InvalidParams`] with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidParams(message.into())
    }

    /// The message, without the `invalid parameters: ` of its display.
    pub fn message(&self) -> &str {
        match self {
            Self::InvalidParams(m) | Self::Failed(m) => m,
        }
    }

    /// [`ToolError::Failed`] with `message`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// The same error, its message prefixed with `what` (`what: message`).
    pub fn context(self, what: impl std::fmt::Display) -> Self {
        match self {
            Self::InvalidParams(m) => Self::InvalidParams(format!("{what}: {m}")),
            Self::Failed(m) => Self::Failed(format!("{what}: {m}")),
        }
    }
}

/// A bare message: the tool ran and failed.
impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

/// A bare message: the tool ran and failed.
impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::Failed(message.into())
    }
}

/// Who is running: passed to tools and hooks.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Agent id.
    pub agent_id: String,
    /// Session id, if any.
    pub session_id: Option<String>,
    /// Model reference of the run.
    pub model_ref: String,
    /// Where the run reports what happens.
    pub events: EventSink,
    /// Who answers the approval requests of `before_tool_call` hooks.
    pub approvals: Approvals,
    /// This run's id (unique in the process), as hooks see it.
    pub run_id: String,
    /// Cancelled to abort the run (Ctrl-C, a client that went away, a
    /// timeout): the runner stops the turn and records what it had done.
    pub cancel: tokio_util::sync::CancellationToken,
    /// How long (ms) an aborted run waits for a native runtime to stop its
    /// own turn before it is dropped; 0 (no native runtime) drops it at once.
    stop_grace_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl RunContext {
    /// A context for an agent and model, with a fresh event sink.
    pub fn new(agent_id: impl Into<String>, model_ref: impl Into<String>) -> Self {
        Self {
            agent_id: agent_id.into(),
            session_id: None,
            model_ref: model_ref.into(),
            events: EventSink::default(),
            approvals: Approvals::default(),
            run_id: next_run_id(),
            cancel: tokio_util::sync::CancellationToken::new(),
            stop_grace_ms: Default::default(),
        }
    }

    /// Let an aborted run wait up to `grace` for a native runtime to stop
    /// its own turn (the longest grace asked for wins).
    pub fn allow_stop_grace(&self, grace: std::time::Duration) {
        let ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
        self.stop_grace_ms
            .fetch_max(ms, std::sync::atomic::Ordering::SeqCst);
    }

    /// The wait granted by [`Self::allow_stop_grace`], if any.
    pub fn stop_grace(&self) -> Option<std::time::Duration> {
        match self.stop_grace_ms.load(std::sync::atomic::Ordering::SeqCst) {
            0 => None,
            ms => Some(std::time::Duration::from_millis(ms)),
        }
    }
}

/// A run id unique across processes: `run-<process>-<n>`, where
/// `<process>` is random per process (so ids built from it, such as the
/// gateway's completion ids, do not repeat after a restart).
fn next_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static PROCESS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // std's hasher keys are drawn from the OS's randomness per process.
    let process = *PROCESS.get_or_init(|| {
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish() as u32
    });
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    format!("run-{process:08x}-{n}")
}

/// The output of one tool call, as the model will see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Output text (JSON text for successful calls).
    pub content: String,
    /// Whether the call failed, was refused or was blocked.
    pub is_error: bool,
    /// Images the tool returned (see [`crate::Image`]).
    pub images: Vec<crate::Image>,
}

/// Runs tool calls. There is one implementation in the host (the tool
/// dispatcher), so every call goes through the same policy and hooks.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// The tools the model may be offered in the run of `ctx` (its agent's
    /// tool policy).
    fn specs(&self, ctx: &RunContext) -> Vec<ToolSpec>;

    /// Run one call. Failures are reported in the output, never as a panic.
    async fn execute(&self, call: &ToolCallRequest, ctx: &RunContext) -> ToolOutput;

    /// Whether a native runtime (Codex, an ACP agent) may run its own call,
    /// judged as the host tool of that name: policy, `before_tool_call`,
    /// approvals. `Ok` holds the arguments to run with, `Err` the refusal.
    /// An executor that cannot judge refuses.
    async fn gate(
        &self,
        call: &ToolCallRequest,
        _ctx: &RunContext,
    ) -> Result<serde_json::Value, Refused> {
        Err(Refused(format!(
            "native tool call `{}` refused: this host cannot ask about native tool calls",
            call.name
        )))
    }
}

/// Why a call may not run (policy, a hook's block, an approval's answer),
/// in words for the model and the runtime asking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);
