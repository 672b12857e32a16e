//! Hook events and decisions, in the SDK's terms.

use crate::{CallContext, Json};

pub use crate::bindings::plugin::exports::openclaw::plugin::persist_hooks::{
    MessageWriteEvent, ToolResultPersistEvent,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::prepare_hooks::{
    ExecEvent, TurnContext,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::prompt_hooks::{
    BeforePromptBuildEvent, PromptEdit,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::run_hooks::{
    AgentStartEvent, LlmInputEvent, LlmOutputEvent, ModelCall, ModelCallEndedEvent,
    ModelCallFailure, ModelOverride, ModelResolveEvent,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::session_hooks::{
    AgentEndEvent, BeforeResetEvent, SessionEndEvent, SessionStartEvent,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::tool_gate::{
    ApprovalDecision, ApprovalRequest, ApprovalResolution, ApprovalSeverity, TimeoutBehavior,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::transcript_hooks::{
    AfterCompactionEvent, BeforeCompactionEvent,
};
pub use crate::bindings::plugin::exports::openclaw::plugin::turn_hooks::{
    FinalizeEvent, TurnEvent,
};

/// What a `before_agent_finalize` handler decides (API 0.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Finalize {
    /// No opinion: the next handler is asked, then the answer stands.
    #[default]
    Proceed,
    /// Ask the runtime for one more pass; the reason is the turn's next
    /// message (the host bounds the passes).
    Revise(String),
    /// Accept the answer now.
    Finalize,
}

/// Every hook a plugin can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// Before a tool runs; may block it or rewrite its parameters.
    BeforeToolCall,
    /// After a tool ran, with the result the model will see (observe).
    AfterToolCall,
    /// Tool-result middleware: may replace the result the model sees
    /// (delivered only when the operator grants `grants.toolResults`).
    ToolResult,
    /// Before a turn's prompt is sent; may edit it.
    BeforePromptBuild,
    /// A run attempt is about to call the model, with the prompt, history
    /// and tools (observe, once per attempt, not awaited; delivered only
    /// with `hooks.allowConversationAccess`).
    LlmInput,
    /// A run attempt finished, with the model's texts and usage (observe,
    /// not awaited; needs `hooks.allowConversationAccess`).
    LlmOutput,
    /// Before a run's model is resolved; may override it (API 0.2.1).
    BeforeModelResolve,
    /// Before a run starts; may stop it (API 0.2.1).
    BeforeAgentStart,
    /// One model call started: metadata only (observe, API 0.2.1).
    ModelCallStarted,
    /// One model call ended: duration and usage or failure (observe, API 0.2.1).
    ModelCallEnded,
    /// A session started or resumed (observe).
    SessionStart,
    /// A session ended (observe).
    SessionEnd,
    /// A turn ended (observe).
    AgentEnd,
    /// A session is about to be reset (observe).
    BeforeReset,
    /// Older context is about to be summarized (observe; to supply the
    /// summary, implement [`crate::Plugin::compaction_priority`] and
    /// [`crate::Plugin::summarize`]).
    BeforeCompaction,
    /// Older context was summarized (observe).
    AfterCompaction,
    /// A tool result is about to be stored in the transcript; may replace the
    /// stored text (API 0.2.1).
    ToolResultPersist,
    /// A message is about to be stored; may replace it or keep it out
    /// (API 0.2.1; delivered only with `hooks.allowConversationAccess`).
    BeforeMessageWrite,
    /// Before a turn runs on its runtime (any runtime); may stop it (API 0.2.2).
    BeforeAgentRun,
    /// Before the runtime runs; may answer in its place (API 0.2.2).
    BeforeAgentReply,
    /// The runtime's final answer is about to be accepted; may ask for one
    /// more pass (API 0.2.2; needs `hooks.allowConversationAccess`).
    BeforeAgentFinalize,
    /// Before the prompt hooks (any runtime); may add context to the
    /// turn's message (API 0.2.3).
    AgentTurnPrepare,
    /// Before the host's `exec` runs a command; may set variables for it,
    /// the names the operator granted in `grants.execEnv` (API 0.2.3).
    ResolveExecEnv,
}

/// The `before_tool_call` event.
#[derive(Debug, Clone)]
pub struct BeforeToolCall {
    /// The tool name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// Parameters as they stand after earlier hooks (parsed on first use).
    pub params: Json,
    /// The plugin providing the tool, or `None` for host tools.
    pub tool_plugin: Option<String>,
    /// The run the call belongs to.
    pub context: CallContext,
}

/// What a `before_tool_call` handler decides.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeDecision {
    /// Let the call go on unchanged.
    Allow,
    /// Stop the call with a reason the model sees.
    Block(String),
    /// Go on with these parameters instead (shallow-merged over the originals).
    Rewrite(serde_json::Value),
    /// Ask the operator first (OpenClaw's `requireApproval`). The first
    /// request wins and freezes the parameters; a lower-priority hook may
    /// still block. See [`crate::Plugin::approval_resolved`] for the answer.
    RequireApproval(ApprovalRequest),
}

impl ApprovalRequest {
    /// A request with this title and description, severity `warning`, the
    /// host's default timeout, and denial when nobody answers.
    pub fn new(title: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            description: description.into(),
            severity: ApprovalSeverity::Warning,
            timeout_ms: None,
            timeout_behavior: TimeoutBehavior::Deny,
        }
    }
}

/// What a `before_message_write` handler decides.
#[derive(Debug, Clone)]
pub enum WriteDecision {
    /// Store the message as it is.
    Keep,
    /// Store this message instead (same kind, same tool call ids).
    Replace(crate::Message),
    /// Do not store it; the reason is logged.
    Block(String),
}

/// The `after_tool_call` and `tool_result` event.
#[derive(Debug, Clone)]
pub struct AfterToolCall {
    /// The tool name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The parameters the tool ran with (parsed on first use).
    pub params: Json,
    /// The tool's result or error text, after earlier hooks (parsed on first use).
    pub outcome: Result<Json, String>,
    /// How long the tool ran, in milliseconds.
    pub duration_ms: u64,
    /// The run the call belongs to.
    pub context: CallContext,
}

/// What a `tool_result` handler decides.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultDecision {
    /// Keep the result.
    Keep,
    /// Replace the result (or error text) the model sees.
    Replace(Result<serde_json::Value, String>),
}

/// The observe-only hook events.
#[derive(Debug, Clone)]
pub enum Observed {
    /// A tool ran.
    AfterToolCall(AfterToolCall),
    /// A session started or resumed.
    SessionStart(SessionStartEvent),
    /// A session ended.
    SessionEnd(SessionEndEvent),
    /// A run attempt is about to call the model.
    LlmInput(LlmInputEvent),
    /// A run attempt finished.
    LlmOutput(LlmOutputEvent),
    /// A model call started.
    ModelCallStarted(ModelCall),
    /// A model call ended.
    ModelCallEnded(ModelCallEndedEvent),
    /// Older context is about to be summarized.
    BeforeCompaction(BeforeCompactionEvent),
    /// Older context was summarized.
    AfterCompaction(AfterCompactionEvent),
    /// A turn ended.
    AgentEnd(AgentEndEvent),
    /// A session is about to be reset.
    BeforeReset(BeforeResetEvent),
}
