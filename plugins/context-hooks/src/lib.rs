//! Example session and model hooks.
//!
//! Config (`plugins.entries.context-hooks.config`):
//! `{ "systemNote": "…", "prepend": "…", "summarize": true }`.
//! - `before_prompt_build`: appends `systemNote` to the system prompt and puts
//!   `prepend` before the user's message (context the model sees; the
//!   transcript keeps what the user typed).
//! - `before_compaction`: with `summarize`, writes the summary itself (no model call).
//! - every observe-only hook (`after_tool_call` too): one log line (`observed <hook> …`), an audit trail.

use clawhost_sdk::{
    export_plugin, log, BeforeCompactionEvent, BeforePromptBuildEvent, Hook, Level, Observed,
    Plugin, PromptEdit,
};

#[derive(Default)]
struct ContextHooks;

impl Plugin for ContextHooks {
    fn hooks(&self) -> Vec<(Hook, i32)> {
        let mut hooks = vec![(Hook::BeforePromptBuild, 10), (Hook::BeforeCompaction, 10)];
        for hook in [
            Hook::SessionStart,
            Hook::SessionEnd,
            Hook::LlmInput,
            Hook::LlmOutput,
            Hook::AfterCompaction,
            Hook::AgentEnd,
            Hook::AfterToolCall,
            Hook::BeforeReset,
        ] {
            hooks.push((hook, 0));
        }
        hooks
    }

    fn before_prompt_build(&self, _event: BeforePromptBuildEvent) -> Option<PromptEdit> {
        let config = clawhost_sdk::config();
        let note = config["systemNote"].as_str().map(str::to_string);
        let prepend = config["prepend"].as_str().map(str::to_string);
        if note.is_none() && prepend.is_none() {
            return None;
        }
        Some(PromptEdit {
            prepend_context: prepend,
            append_context: None,
            system_prompt: None,
            prepend_system_context: None,
            append_system_context: note,
        })
    }

    fn before_compaction(&self, event: BeforeCompactionEvent) -> Option<String> {
        if clawhost_sdk::config()["summarize"].as_bool() != Some(true) {
            return None;
        }
        let first_line = event.transcript.lines().next().unwrap_or_default();
        Some(format!(
            "context-hooks summary of {} messages (~{} tokens); it began with: {first_line}",
            event.compacted_count, event.token_count
        ))
    }

    fn observe(&self, event: Observed) {
        let line = match event {
            Observed::AfterToolCall(e) => format!(
                "observed after_tool_call {} ok={} duration_ms={}",
                e.tool,
                e.outcome.is_ok(),
                e.duration_ms
            ),
            Observed::BeforeReset(e) => format!(
                "observed before_reset {} messages={}",
                e.session_id, e.message_count
            ),
            Observed::SessionStart(e) => format!(
                "observed session_start {} resumed={}",
                e.session_id, e.resumed
            ),
            Observed::SessionEnd(e) => format!(
                "observed session_end {} reason={}",
                e.session_id,
                reason(e.reason)
            ),
            Observed::LlmInput(e) => format!(
                "observed llm_input {} messages={} tools={}",
                e.model_ref, e.message_count, e.tool_count
            ),
            Observed::LlmOutput(e) => format!(
                "observed llm_output {} tool_calls={} text={}",
                e.model_ref, e.tool_call_count, e.text
            ),
            Observed::AfterCompaction(e) => format!(
                "observed after_compaction compacted={} of {}",
                e.compacted_count, e.message_count
            ),
            Observed::AgentEnd(e) => format!(
                "observed agent_end success={} iterations={} text={}",
                e.success, e.iterations, e.text
            ),
        };
        log(Level::Info, &line);
    }
}

fn reason(r: clawhost_sdk::SessionEndReason) -> &'static str {
    match r {
        clawhost_sdk::SessionEndReason::New => "new",
        clawhost_sdk::SessionEndReason::Reset => "reset",
        clawhost_sdk::SessionEndReason::Quit => "quit",
    }
}

export_plugin!(ContextHooks);
