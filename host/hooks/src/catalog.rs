//! Typed hook events and outcomes (the host side of the WIT `types` interface).

use clawhost_agent_core::{
    ApprovalDecision, ApprovalRequest, Message, SharedMessage, ToolError, Usage,
};

pub use crate::exec_env::ExecEnvEvent;
pub use crate::run_events::{
    AgentStartEvent, ModelCall, ModelCallEndedEvent, ModelOverride, ModelResolveEvent,
};
pub use crate::turn_hooks::{AgentFinalizeEvent, AgentRunEvent, FinalizeDecision};
use serde_json::Value;

pub use clawhost_config::HookKind;

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

/// Why a hook stopped what it guards (a tool call, a run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Blocked(pub String);

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
    pub outcome: Result<crate::SharedJson, ToolError>,
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
    Replace(Result<Value, ToolError>),
}

macro_rules! hook_events {
    ($($name:literal $variant:ident $mode:ident $fail:ident $gate:ident $deadline:tt
        $doc:literal $event:ident $outcome:ty;)*) => {
        /// An event delivered to a handler, borrowed from the runner that
        /// owns it (one variant per row of the hook table).
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum HookEvent<'a> {
            $(#[doc = $doc] $variant(&'a $event),)*
        }

        impl HookEvent<'_> {
            /// Which hook this event is for.
            pub fn kind(&self) -> HookKind {
                match self { $(HookEvent::$variant(_) => HookKind::$variant,)* }
            }
        }

        /// A handler's answer (one variant per row of the hook table;
        /// observe-only hooks answer `()`).
        #[derive(Debug, Clone, PartialEq)]
        pub enum HookOutcome {
            $(#[doc = $doc] $variant($outcome),)*
        }

        impl HookOutcome {
            /// Which hook this answers.
            pub fn kind(&self) -> HookKind {
                match self { $(HookOutcome::$variant(_) => HookKind::$variant,)* }
            }

            /// The answer of an observe-only hook `kind` (`None` for the others).
            pub fn observed(kind: HookKind) -> Option<Self> {
                match kind { $(HookKind::$variant => observed!($mode $variant),)* }
            }
        }
    };
}

macro_rules! observed {
    (Observe $variant:ident) => {
        Some(HookOutcome::$variant(()))
    };
    ($mode:ident $variant:ident) => {
        None
    };
}

clawhost_config::hook_table!(hook_events);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_outcomes_name_their_hook() {
        let e = BeforeResetEvent {
            session_id: "s".into(),
            agent_id: "a".into(),
            message_count: 1,
        };
        assert_eq!(HookEvent::BeforeReset(&e).kind(), HookKind::BeforeReset);
        assert_eq!(HookOutcome::AgentEnd(()).kind(), HookKind::AgentEnd);
        assert_eq!(
            HookOutcome::CompactionProvider(None).kind(),
            HookKind::CompactionProvider
        );
        assert_eq!(
            HookOutcome::observed(HookKind::AgentEnd),
            Some(HookOutcome::AgentEnd(()))
        );
        assert_eq!(HookOutcome::observed(HookKind::BeforeToolCall), None);
    }

    /// The book's hook catalog (`docs/src/hooks.md`) has a row for every
    /// hook of the table, and its fail policy and gate columns say what the
    /// table says.
    #[test]
    fn the_book_catalog_follows_the_hook_table() {
        let chapter = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/src/hooks.md");
        let section = std::fs::read_to_string(chapter).unwrap();
        let rows: Vec<Vec<&str>> = section
            .lines()
            .take_while(|l| !l.starts_with("## "))
            .filter(|l| l.starts_with("| `"))
            .map(|l| l.split(" | ").collect())
            .collect();
        for kind in HookKind::ALL {
            let name = format!("`{}`", kind.name());
            let row = rows
                .iter()
                .find(|r| r[0].split(['|', ',', ' ']).any(|n| n == name))
                .unwrap_or_else(|| panic!("docs/src/hooks.md has no row for {name}"));
            let (fail, gate) = (row[5], row[6]);
            let closed = kind.default_fail_policy() == clawhost_config::FailPolicy::Block;
            assert_eq!(fail.starts_with("`block`"), closed, "{name}: {fail}");
            match kind.gate().setting() {
                Some(setting) => assert!(gate.contains(setting), "{name}: {gate}"),
                None => assert_eq!(gate, "—", "{name}"),
            }
        }
    }
}
