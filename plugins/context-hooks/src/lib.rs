//! Example session and model hooks.
//!
//! Config (`plugins.entries.context-hooks.config`):
//! `{ "systemNote": "…", "prepend": "…", "summarize": true }`.
//! - `before_prompt_build`: appends `systemNote` to the system prompt and puts
//!   `prepend` before the user's message.
//! - `before_compaction`: with `summarize`, writes the summary itself (no model call).
//! - every observe-only hook: one log line (`observed <hook> …`), an audit trail.

use clawhost_sdk::{
    export_plugin, log, BeforeCompactionEvent, BeforePromptBuildEvent, HookKind, Level, Observed, Plugin,
    PromptEdit, Registration,
};

struct ContextHooks;

impl Plugin for ContextHooks {
    fn register() -> Registration {
        let mut r = Registration::new("context-hooks", "0.1.0")
            .hook(HookKind::BeforePromptBuild, 10)
            .hook(HookKind::BeforeCompaction, 10);
        for kind in [
            HookKind::SessionStart,
            HookKind::SessionEnd,
            HookKind::LlmInput,
            HookKind::LlmOutput,
            HookKind::AfterCompaction,
            HookKind::AgentEnd,
        ] {
            r = r.hook(kind, 0);
        }
        r
    }

    fn before_prompt_build(event: BeforePromptBuildEvent) -> Option<PromptEdit> {
        let config = clawhost_sdk::config();
        let note = config["systemNote"].as_str();
        let prepend = config["prepend"].as_str().map(str::to_string);
        if note.is_none() && prepend.is_none() {
            return None;
        }
        let system = note.map(|n| match &event.system {
            Some(s) if !s.is_empty() => format!("{s}\n{n}"),
            _ => n.to_string(),
        });
        Some(PromptEdit { prepend, append: None, system })
    }

    fn before_compaction(event: BeforeCompactionEvent) -> Option<String> {
        if clawhost_sdk::config()["summarize"].as_bool() != Some(true) {
            return None;
        }
        let first_line = event.transcript.lines().next().unwrap_or_default();
        Some(format!(
            "context-hooks summary of {} messages (~{} tokens); it began with: {first_line}",
            event.compacted_count, event.token_count
        ))
    }

    fn observe(event: Observed) {
        let line = match event {
            Observed::SessionStart(e) => format!("observed session_start {} resumed={}", e.session_id, e.resumed),
            Observed::SessionEnd(e) => format!("observed session_end {} reason={}", e.session_id, e.reason),
            Observed::LlmInput(e) => format!("observed llm_input {} messages={} tools={}", e.model_ref, e.message_count, e.tool_count),
            Observed::LlmOutput(e) => format!("observed llm_output {} tool_calls={} text={}", e.model_ref, e.tool_call_count, e.text),
            Observed::AfterCompaction(e) => format!("observed after_compaction compacted={} of {}", e.compacted_count, e.message_count),
            Observed::AgentEnd(e) => format!("observed agent_end success={} iterations={} text={}", e.success, e.iterations, e.text),
        };
        log(Level::Info, &line);
    }
}

export_plugin!(ContextHooks);
