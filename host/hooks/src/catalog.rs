//! Typed hook events and outcomes (the host side of the WIT `types` interface).

use clawhost_agent_core::{ApprovalDecision, ApprovalRequest, Message, SharedMessage, Usage};

pub use crate::run_events::{
    AgentStartEvent, ModelCall, ModelCallEndedEvent, ModelOverride, ModelResolveEvent,
};
use serde_json::Value;

/// Hooks a plugin can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookKind {
    /// Before a tool runs (modifying).
    BeforeToolCall,
    /// After a tool ran (observe).
    AfterToolCall,
    /// Tool-result middleware: may replace the result the model sees
    /// (modifying; the operator must grant it).
    ToolResult,
    /// A session started or resumed (observe).
    SessionStart,
    /// A session ended (observe).
    SessionEnd,
    /// Before the prompt is sent (modifying).
    BeforePromptBuild,
    /// A model request is about to go out (observe).
    LlmInput,
    /// A model reply arrived (observe).
    LlmOutput,
    /// Before compaction (observe; summaries come from the compaction-provider seam).
    BeforeCompaction,
    /// After compaction (observe).
    AfterCompaction,
    /// A turn ended (observe).
    AgentEnd,
    /// A session is about to be reset (observe).
    BeforeReset,
    /// A tool result is about to be stored in the transcript (modifying: may
    /// replace the stored text).
    ToolResultPersist,
    /// A message is about to be stored (modifying: may replace it or keep it out).
    BeforeMessageWrite,
    /// Before a run's model is resolved (modifying: may override it).
    BeforeModelResolve,
    /// Before a run starts (modifying: may stop it).
    BeforeAgentStart,
    /// One model call started (observe).
    ModelCallStarted,
    /// One model call ended (observe).
    ModelCallEnded,
    /// The compaction-provider seam: may supply a summary (modifying; the
    /// operator must grant it).
    CompactionProvider,
}

impl HookKind {
    /// Every hook, in catalog order.
    pub const ALL: [HookKind; 19] = [
        HookKind::BeforeToolCall,
        HookKind::AfterToolCall,
        HookKind::ToolResult,
        HookKind::SessionStart,
        HookKind::SessionEnd,
        HookKind::BeforePromptBuild,
        HookKind::LlmInput,
        HookKind::LlmOutput,
        HookKind::BeforeCompaction,
        HookKind::AfterCompaction,
        HookKind::AgentEnd,
        HookKind::BeforeReset,
        HookKind::ToolResultPersist,
        HookKind::BeforeMessageWrite,
        HookKind::BeforeModelResolve,
        HookKind::BeforeAgentStart,
        HookKind::ModelCallStarted,
        HookKind::ModelCallEnded,
        HookKind::CompactionProvider,
    ];

    /// The hook's catalog name.
    pub fn name(self) -> &'static str {
        match self {
            HookKind::BeforeToolCall => "before_tool_call",
            HookKind::AfterToolCall => "after_tool_call",
            HookKind::ToolResult => "tool_result",
            HookKind::SessionStart => "session_start",
            HookKind::SessionEnd => "session_end",
            HookKind::BeforePromptBuild => "before_prompt_build",
            HookKind::LlmInput => "llm_input",
            HookKind::LlmOutput => "llm_output",
            HookKind::BeforeCompaction => "before_compaction",
            HookKind::AfterCompaction => "after_compaction",
            HookKind::AgentEnd => "agent_end",
            HookKind::BeforeReset => "before_reset",
            HookKind::ToolResultPersist => "tool_result_persist",
            HookKind::BeforeMessageWrite => "before_message_write",
            HookKind::BeforeModelResolve => "before_model_resolve",
            HookKind::BeforeAgentStart => "before_agent_start",
            HookKind::ModelCallStarted => "model_call_started",
            HookKind::ModelCallEnded => "model_call_ended",
            HookKind::CompactionProvider => "compaction_provider",
        }
    }

    /// Whether the hook only observes (its handlers run concurrently and
    /// cannot change anything).
    pub fn observe_only(self) -> bool {
        !matches!(
            self,
            HookKind::BeforeToolCall
                | HookKind::ToolResult
                | HookKind::BeforePromptBuild
                | HookKind::ToolResultPersist
                | HookKind::BeforeMessageWrite
                | HookKind::BeforeModelResolve
                | HookKind::BeforeAgentStart
                | HookKind::CompactionProvider
        )
    }
}

/// `before_reset`: a session is about to be reset.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeResetEvent {
    /// Session id.
    pub session_id: String,
    /// Agent id.
    pub agent_id: String,
    /// Messages the session holds now.
    pub message_count: u32,
}

/// `session_start`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionStartEvent {
    /// Session id.
    pub session_id: String,
    /// Agent id.
    pub agent_id: String,
    /// Whether an existing session was resumed.
    pub resumed: bool,
}

/// `session_end`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEndEvent {
    /// Session id.
    pub session_id: String,
    /// Agent id.
    pub agent_id: String,
    /// Why it ended.
    pub reason: SessionEndReason,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEndReason {
    /// A new session replaced it.
    New,
    /// It was reset.
    Reset,
    /// The user quit.
    Quit,
}

impl SessionEndReason {
    /// `new`, `reset` or `quit`.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionEndReason::New => "new",
            SessionEndReason::Reset => "reset",
            SessionEndReason::Quit => "quit",
        }
    }
}

/// `before_prompt_build`.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforePromptBuildEvent {
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// System prompt as it stands.
    pub system: Option<String>,
    /// User message as it stands.
    pub prompt: String,
}

/// Edits a `before_prompt_build` handler makes (OpenClaw's result fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptEdit {
    /// Context put before the user message.
    pub prepend_context: Option<String>,
    /// Context put after the user message.
    pub append_context: Option<String>,
    /// A replacement system prompt.
    pub system_prompt: Option<String>,
    /// Text put before the system prompt.
    pub prepend_system_context: Option<String>,
    /// Text put after the system prompt.
    pub append_system_context: Option<String>,
}

/// `llm_input`: a run attempt is about to call the model (once per attempt).
#[derive(Debug, Clone, PartialEq)]
pub struct LlmInputEvent {
    /// The run.
    pub run_id: String,
    /// Attempt number within the run (1-based).
    pub attempt: u32,
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// Model reference.
    pub model_ref: String,
    /// System prompt sent.
    pub system: Option<String>,
    /// The user's message as sent.
    pub prompt: String,
    /// The history sent before it (shared with the session's).
    pub history: Vec<SharedMessage>,
    /// Names of the tools offered.
    pub tools: Vec<String>,
}

impl LlmInputEvent {
    /// Messages sent: the history and the user's message (the 0.1 / 0.2.0 summary form).
    pub fn message_count(&self) -> u32 {
        u32::try_from(self.history.len() + 1).unwrap_or(u32::MAX)
    }

    /// Tools offered.
    pub fn tool_count(&self) -> u32 {
        u32::try_from(self.tools.len()).unwrap_or(u32::MAX)
    }
}

/// `llm_output`: a run attempt finished.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmOutputEvent {
    /// The run.
    pub run_id: String,
    /// Attempt number within the run.
    pub attempt: u32,
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// Model reference.
    pub model_ref: String,
    /// The model's texts, one per reply.
    pub texts: Vec<String>,
    /// Tool calls the model made in the attempt.
    pub tool_calls: u32,
    /// Token usage of the attempt.
    pub usage: Usage,
}

/// `before_compaction`.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeCompactionEvent {
    /// Session id.
    pub session_id: Option<String>,
    /// Messages in the context.
    pub message_count: u32,
    /// Estimated tokens.
    pub token_count: u64,
    /// Messages to be summarized.
    pub compacted_count: u32,
    /// Those messages as text.
    pub transcript: String,
}

/// `after_compaction`.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterCompactionEvent {
    /// Session id.
    pub session_id: Option<String>,
    /// Messages before.
    pub message_count: u32,
    /// Estimated tokens before.
    pub token_count: u64,
    /// Messages summarized.
    pub compacted_count: u32,
}

/// `agent_end`.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEndEvent {
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// Whether the turn answered.
    pub success: bool,
    /// Answer or error.
    pub text: String,
    /// Model calls made.
    pub iterations: u32,
}

/// The run a hook event belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct CallContext {
    /// Agent id.
    pub agent_id: String,
    /// Session id, if any.
    pub session_id: Option<String>,
    /// Model reference.
    pub model_ref: String,
}

/// `before_tool_call`: a tool is about to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeToolCallEvent {
    /// Tool name.
    pub tool: String,
    /// Call id.
    pub call_id: String,
    /// Parameters as they stand.
    pub params: crate::SharedJson,
    /// The plugin providing the tool (`None` for host tools).
    pub tool_plugin: Option<String>,
    /// The run.
    pub context: CallContext,
}

/// A `before_tool_call` decision.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolCallOutcome {
    /// Go on.
    Allow,
    /// Stop the call with this reason.
    Block(String),
    /// Go on with these parameters.
    Rewrite(Value),
    /// Ask the operator first (API 0.2.1 `tool-gate`).
    RequireApproval(ApprovalRequest),
}

impl LlmOutputEvent {
    /// The texts as one, separated by blank lines (the 0.1 / 0.2.0 form).
    pub fn text(&self) -> String {
        self.texts
            .iter()
            .filter(|t| !t.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// The answer to an approval request, told to the plugin that asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalResolvedEvent {
    /// Tool name.
    pub tool: String,
    /// Call id.
    pub call_id: String,
    /// The answer.
    pub decision: ApprovalDecision,
    /// The run.
    pub context: CallContext,
}

/// `tool_result_persist`: a tool result is about to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultPersistEvent {
    /// Tool name.
    pub tool: String,
    /// Call id.
    pub call_id: String,
    /// The text about to be stored, after earlier handlers.
    pub content: String,
    /// Whether the call failed or was blocked.
    pub is_error: bool,
    /// The run.
    pub context: CallContext,
}

/// `before_message_write`: a message is about to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageWriteEvent {
    /// Session id.
    pub session_id: String,
    /// Agent id.
    pub agent_id: String,
    /// The message, after earlier handlers.
    pub message: Message,
}

/// A `before_message_write` decision.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageWriteOutcome {
    /// Store it as it is.
    Keep,
    /// Store this instead.
    Replace(Message),
    /// Do not store it, for this reason.
    Block(String),
}

/// `after_tool_call` and `tool_result`: a tool ran.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterToolCallEvent {
    /// Tool name.
    pub tool: String,
    /// Call id.
    pub call_id: String,
    /// Parameters the tool ran with.
    pub params: crate::SharedJson,
    /// Result or error message as it stands.
    pub outcome: Result<crate::SharedJson, String>,
    /// How long the tool ran.
    pub duration_ms: u64,
    /// The run.
    pub context: CallContext,
}

/// A `tool_result` middleware decision.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultOutcome {
    /// Keep the result.
    Keep,
    /// Replace it.
    Replace(Result<Value, String>),
}

/// An event delivered to a handler.
#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    /// See [`BeforeToolCallEvent`].
    BeforeToolCall(BeforeToolCallEvent),
    /// See [`AfterToolCallEvent`] (observe).
    AfterToolCall(AfterToolCallEvent),
    /// The tool-result middleware: see [`AfterToolCallEvent`].
    ToolResult(AfterToolCallEvent),
    /// See [`SessionStartEvent`].
    SessionStart(SessionStartEvent),
    /// See [`SessionEndEvent`].
    SessionEnd(SessionEndEvent),
    /// See [`BeforePromptBuildEvent`].
    BeforePromptBuild(BeforePromptBuildEvent),
    /// See [`LlmInputEvent`].
    LlmInput(LlmInputEvent),
    /// See [`LlmOutputEvent`].
    LlmOutput(LlmOutputEvent),
    /// See [`BeforeCompactionEvent`].
    BeforeCompaction(BeforeCompactionEvent),
    /// See [`AfterCompactionEvent`].
    AfterCompaction(AfterCompactionEvent),
    /// See [`AgentEndEvent`].
    AgentEnd(AgentEndEvent),
    /// See [`BeforeResetEvent`].
    BeforeReset(BeforeResetEvent),
    /// The answer to an approval request, for the plugin that asked (part of
    /// its `before_tool_call` subscription).
    ApprovalResolved(ApprovalResolvedEvent),
    /// See [`ToolResultPersistEvent`].
    ToolResultPersist(ToolResultPersistEvent),
    /// See [`MessageWriteEvent`].
    BeforeMessageWrite(MessageWriteEvent),
    /// See [`ModelResolveEvent`].
    BeforeModelResolve(ModelResolveEvent),
    /// See [`AgentStartEvent`].
    BeforeAgentStart(AgentStartEvent),
    /// See [`ModelCall`].
    ModelCallStarted(ModelCall),
    /// See [`ModelCallEndedEvent`].
    ModelCallEnded(ModelCallEndedEvent),
    /// The compaction-provider seam, asked with the `before_compaction` event.
    CompactionProvider(BeforeCompactionEvent),
}

impl HookEvent {
    /// Which hook this event is for.
    pub fn kind(&self) -> HookKind {
        match self {
            HookEvent::BeforeToolCall(_) => HookKind::BeforeToolCall,
            HookEvent::AfterToolCall(_) => HookKind::AfterToolCall,
            HookEvent::ToolResult(_) => HookKind::ToolResult,
            HookEvent::SessionStart(_) => HookKind::SessionStart,
            HookEvent::SessionEnd(_) => HookKind::SessionEnd,
            HookEvent::BeforePromptBuild(_) => HookKind::BeforePromptBuild,
            HookEvent::LlmInput(_) => HookKind::LlmInput,
            HookEvent::LlmOutput(_) => HookKind::LlmOutput,
            HookEvent::BeforeCompaction(_) => HookKind::BeforeCompaction,
            HookEvent::AfterCompaction(_) => HookKind::AfterCompaction,
            HookEvent::AgentEnd(_) => HookKind::AgentEnd,
            HookEvent::BeforeReset(_) => HookKind::BeforeReset,
            HookEvent::ApprovalResolved(_) => HookKind::BeforeToolCall,
            HookEvent::ToolResultPersist(_) => HookKind::ToolResultPersist,
            HookEvent::BeforeMessageWrite(_) => HookKind::BeforeMessageWrite,
            HookEvent::BeforeModelResolve(_) => HookKind::BeforeModelResolve,
            HookEvent::BeforeAgentStart(_) => HookKind::BeforeAgentStart,
            HookEvent::ModelCallStarted(_) => HookKind::ModelCallStarted,
            HookEvent::ModelCallEnded(_) => HookKind::ModelCallEnded,
            HookEvent::CompactionProvider(_) => HookKind::CompactionProvider,
        }
    }
}

/// A handler's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// Answer to `before_tool_call`.
    BeforeToolCall(BeforeToolCallOutcome),
    /// Answer to `tool_result`.
    ToolResult(ToolResultOutcome),
    /// Answer to `before_prompt_build` (`None`: no change).
    BeforePromptBuild(Option<PromptEdit>),
    /// Answer of a compaction provider (`Some`: use this summary).
    CompactionSummary(Option<String>),
    /// Answer to `before_model_resolve` (`Some`: use this model instead).
    BeforeModelResolve(Option<ModelOverride>),
    /// Answer to `before_agent_start` (`Err`: do not run, for this reason).
    BeforeAgentStart(Result<(), String>),
    /// Answer to `tool_result_persist` (`Some`: store this text).
    ToolResultPersist(Option<String>),
    /// Answer to `before_message_write`.
    BeforeMessageWrite(MessageWriteOutcome),
    /// Answer to an observe-only hook (and to an approval resolution).
    Observed,
}

impl HookOutcome {
    /// The kind of answer, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            HookOutcome::BeforeToolCall(_) => "before_tool_call",
            HookOutcome::ToolResult(_) => "tool_result",
            HookOutcome::BeforePromptBuild(_) => "before_prompt_build",
            HookOutcome::CompactionSummary(_) => "compaction_provider",
            HookOutcome::BeforeModelResolve(_) => "before_model_resolve",
            HookOutcome::BeforeAgentStart(_) => "before_agent_start",
            HookOutcome::ToolResultPersist(_) => "tool_result_persist",
            HookOutcome::BeforeMessageWrite(_) => "before_message_write",
            HookOutcome::Observed => "observed",
        }
    }

    /// Whether this outcome answers an event of `kind`.
    pub fn answers(&self, kind: HookKind) -> bool {
        match self {
            HookOutcome::BeforeToolCall(_) => kind == HookKind::BeforeToolCall,
            HookOutcome::ToolResult(_) => kind == HookKind::ToolResult,
            HookOutcome::BeforePromptBuild(_) => kind == HookKind::BeforePromptBuild,
            HookOutcome::CompactionSummary(_) => kind == HookKind::CompactionProvider,
            HookOutcome::BeforeModelResolve(_) => kind == HookKind::BeforeModelResolve,
            HookOutcome::BeforeAgentStart(_) => kind == HookKind::BeforeAgentStart,
            HookOutcome::ToolResultPersist(_) => kind == HookKind::ToolResultPersist,
            HookOutcome::BeforeMessageWrite(_) => kind == HookKind::BeforeMessageWrite,
            HookOutcome::Observed => kind.observe_only(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HookKind;

    #[test]
    fn the_catalog_matches_the_hook_names_config_accepts() {
        let names: Vec<&str> = HookKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, clawhost_config::HOOK_NAMES);
    }
}
