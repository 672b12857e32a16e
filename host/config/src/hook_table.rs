//! The hook table: one row per hook, the only place a hook is declared.
//!
//! [`hook_table!`](crate::hook_table) hands the rows to a macro of the
//! caller's choice. This crate expands them into [`HookKind`] and its facts
//! (name, mode, default fail policy, gate, default deadline); `clawhost-hooks`
//! expands the same rows into its typed `HookEvent` and `HookOutcome`, whose
//! event and outcome types are named in the last two columns (they resolve
//! in the crate that expands them). CONTRIBUTING.md says how to add a hook.

use crate::FailPolicy;

/// Calls `$then! { rows }` with the hook table. Columns, in order:
///
/// | column | meaning |
/// |---|---|
/// | name | the catalog name (config keys, WIT, transcripts) |
/// | variant | the Rust variant of `HookKind`, `HookEvent`, `HookOutcome` |
/// | mode | [`HookMode`]: how answers combine |
/// | fail | the [`FailPolicy`] when no operator setting covers the hook |
/// | gate | the [`HookGate`] that must allow delivery to a plugin |
/// | deadline | default deadline in ms, `-` for the plugin call deadline |
/// | doc | one line for the docs |
/// | event | the event type handlers receive (in `clawhost-hooks`) |
/// | outcome | the answer type (`()` for observe-only hooks) |
#[macro_export]
macro_rules! hook_table {
    ($then:ident) => {
        $then! {
            "before_tool_call" BeforeToolCall Gate Block Open -
                "Before a tool runs: allow, block, rewrite the parameters or ask for approval."
                BeforeToolCallEvent BeforeToolCallOutcome;
            "after_tool_call" AfterToolCall Observe Ignore Open -
                "After a tool ran."
                AfterToolCallEvent ();
            "tool_result" ToolResult Modify Block ToolResults -
                "Tool-result middleware: may replace the result the model sees."
                AfterToolCallEvent ToolResultOutcome;
            "session_start" SessionStart Observe Ignore Open -
                "A session started or resumed."
                SessionStartEvent ();
            "session_end" SessionEnd Observe Ignore Open -
                "A session ended."
                SessionEndEvent ();
            "before_prompt_build" BeforePromptBuild Modify Ignore PromptInjection -
                "Before the prompt is sent: context and system prompt edits, merged."
                BeforePromptBuildEvent Option<PromptEdit>;
            "llm_input" LlmInput Observe Ignore ConversationAccess -
                "A model request is about to go out."
                LlmInputEvent ();
            "llm_output" LlmOutput Observe Ignore ConversationAccess -
                "A model reply arrived."
                LlmOutputEvent ();
            "before_compaction" BeforeCompaction Observe Ignore Open -
                "Before compaction."
                BeforeCompactionEvent ();
            "after_compaction" AfterCompaction Observe Ignore Open -
                "After compaction."
                AfterCompactionEvent ();
            "agent_end" AgentEnd Observe Ignore ConversationAccess 30_000
                "A turn ended."
                AgentEndEvent ();
            "before_reset" BeforeReset Observe Ignore Open -
                "A session is about to be reset."
                BeforeResetEvent ();
            "tool_result_persist" ToolResultPersist Modify Block Open -
                "A tool result is about to be stored: may replace the stored text."
                ToolResultPersistEvent Option<String>;
            "before_message_write" BeforeMessageWrite Gate Ignore ConversationAccess -
                "A message is about to be stored: keep, replace or keep it out."
                MessageWriteEvent MessageWriteOutcome;
            "before_model_resolve" BeforeModelResolve Modify Ignore Open -
                "Before a run's model is resolved: may override it."
                ModelResolveEvent Option<ModelOverride>;
            "before_agent_start" BeforeAgentStart Gate Ignore Open -
                "Before a run starts: may stop it."
                AgentStartEvent Result<(), Blocked>;
            "model_call_started" ModelCallStarted Observe Ignore Open -
                "One model call started."
                ModelCall ();
            "model_call_ended" ModelCallEnded Observe Ignore Open -
                "One model call ended."
                ModelCallEndedEvent ();
            "compaction_provider" CompactionProvider Claim Ignore Compaction -
                "The compaction-provider seam: the first summary supplied is used."
                BeforeCompactionEvent Option<String>;
            "before_agent_run" BeforeAgentRun Gate Block Open -
                "Before a turn runs on its runtime (any runtime): allow or block it; fails closed."
                AgentRunEvent Result<(), Blocked>;
            "before_agent_reply" BeforeAgentReply Claim Ignore Open -
                "Before the runtime runs: answer in its place (the first reply wins; empty is silence)."
                AgentRunEvent Option<String>;
            "before_agent_finalize" BeforeAgentFinalize Modify Ignore ConversationAccess -
                "The runtime's final answer is about to be accepted: go on, ask for one more pass, or finalize."
                AgentFinalizeEvent FinalizeDecision;
            "agent_turn_prepare" AgentTurnPrepare Modify Ignore PromptInjection -
                "Before the prompt hooks, on any runtime: context added to the turn's message, joined in priority order."
                AgentRunEvent Option<PromptEdit>;
            "resolve_exec_env" ResolveExecEnv Modify Ignore ExecEnv -
                "Before the host's exec runs a command: environment variables for it (the names `grants.execEnv` allows; a higher priority's value wins)."
                ExecEnvEvent Vec<(String, String)>;
        }
    };
}

/// How the answers of a hook's handlers combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookMode {
    /// Handlers run one after another by priority; each sees the value the
    /// one before left and may change it.
    Modify,
    /// As [`HookMode::Modify`], and a handler may stop what the hook guards.
    Gate,
    /// Handlers are asked by priority; the first that answers claims the job.
    Claim,
    /// Handlers run concurrently and can change nothing.
    Observe,
}

/// The operator setting that must allow a hook's delivery to a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookGate {
    /// Always delivered.
    Open,
    /// `hooks.allowConversationAccess` (off by default): the hook sees the conversation.
    ConversationAccess,
    /// `hooks.allowPromptInjection` (on by default): the hook edits the prompt.
    PromptInjection,
    /// `grants.toolResults`: the hook may replace tool results.
    ToolResults,
    /// `grants.compaction`: the hook may supply compaction summaries.
    Compaction,
    /// `grants.execEnv`: the hook may set these variables of `exec` commands.
    ExecEnv,
}

impl HookGate {
    /// The setting under `plugins.entries.<id>`, e.g. `hooks.allowConversationAccess`.
    pub fn setting(self) -> Option<&'static str> {
        match self {
            HookGate::Open => None,
            HookGate::ConversationAccess => Some("hooks.allowConversationAccess"),
            HookGate::PromptInjection => Some("hooks.allowPromptInjection"),
            HookGate::ToolResults => Some("grants.toolResults"),
            HookGate::Compaction => Some("grants.compaction"),
            HookGate::ExecEnv => Some("grants.execEnv"),
        }
    }
}

macro_rules! deadline {
    (-) => {
        None
    };
    ($ms:literal) => {
        Some($ms)
    };
}

macro_rules! hook_kinds {
    ($($name:literal $variant:ident $mode:ident $fail:ident $gate:ident $deadline:tt
        $doc:literal $event:ident $outcome:ty;)*) => {
        /// A hook plugins can subscribe to (rows of [`hook_table!`](crate::hook_table)).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum HookKind {
            $(#[doc = $doc] $variant,)*
        }

        impl HookKind {
            /// Every hook, in table order.
            pub const ALL: &'static [HookKind] = &[$(HookKind::$variant,)*];

            /// The catalog name (`before_tool_call`).
            pub fn name(self) -> &'static str {
                match self { $(HookKind::$variant => $name,)* }
            }

            /// How its handlers' answers combine.
            pub fn mode(self) -> HookMode {
                match self { $(HookKind::$variant => HookMode::$mode,)* }
            }

            /// The fail policy when no operator setting covers it.
            pub fn default_fail_policy(self) -> FailPolicy {
                match self { $(HookKind::$variant => FailPolicy::$fail,)* }
            }

            /// The setting that must allow its delivery to a plugin.
            pub fn gate(self) -> HookGate {
                match self { $(HookKind::$variant => HookGate::$gate,)* }
            }

            /// Its deadline in ms when no operator setting gives one
            /// (`None`: the plugin call deadline).
            pub fn default_deadline_ms(self) -> Option<u64> {
                match self { $(HookKind::$variant => deadline!($deadline),)* }
            }

            /// One line about it.
            pub fn doc(self) -> &'static str {
                match self { $(HookKind::$variant => $doc,)* }
            }
        }
    };
}

hook_table!(hook_kinds);

impl HookKind {
    /// The hook called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether its handlers only observe (run concurrently, change nothing).
    pub fn observe_only(self) -> bool {
        self.mode() == HookMode::Observe
    }
}

impl std::fmt::Display for HookKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for HookKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for kind in HookKind::ALL {
            assert_eq!(HookKind::from_name(kind.name()), Some(*kind));
        }
        assert_eq!(HookKind::from_name("before_tool_cal"), None);
    }

    #[test]
    fn the_safe_defaults_hold() {
        // Hooks that guard what runs or what is stored fail closed.
        let closed: Vec<&str> = HookKind::ALL
            .iter()
            .filter(|k| k.default_fail_policy() == FailPolicy::Block)
            .map(|k| k.name())
            .collect();
        assert_eq!(
            closed,
            [
                "before_tool_call",
                "tool_result",
                "tool_result_persist",
                "before_agent_run"
            ]
        );
        assert_eq!(HookKind::AgentEnd.default_deadline_ms(), Some(30_000));
        assert_eq!(HookKind::LlmInput.gate(), HookGate::ConversationAccess);
    }
}
