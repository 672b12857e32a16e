//! Example session and model hooks.
//!
//! Config (`plugins.entries.context-hooks.config`):
//! `{ "systemNote": "…", "prepend": "…", "summarize": true, "model": "provider/model",
//!    "stopWord": "…", "blockRuntime": "…", "cannedReplies": {…}, "mustMention": "…",
//!    "turnContext": "…", "execEnv": {…} }`.
//! - `before_prompt_build`: appends `systemNote` to the system prompt and puts
//!   `prepend` before the user's message (context the model sees; the
//!   transcript keeps what the user typed).
//! - compaction provider: with `summarize` (and the operator's
//!   `grants.compaction`), writes the summary itself (no model call).
//! - `before_model_resolve`: with `model`, runs that model instead.
//! - `before_agent_start`: with `stopWord`, stops runs whose message contains it.
//! - `before_agent_run`: with `blockRuntime`, stops turns on that runtime.
//! - `before_agent_reply`: with `cannedReplies` (`{"ping": "pong"}`), answers
//!   a message it knows without running the runtime.
//! - `before_agent_finalize`: with `mustMention`, sends an answer that does
//!   not mention it back for one more pass (`Please mention <it>.`).
//! - `agent_turn_prepare`: with `turnContext`, puts `[<runtime>] <it>` after
//!   the user's message (any runtime).
//! - `resolve_exec_env`: with `execEnv` (`{"NAME": "value"}`), sets those
//!   variables for the host's `exec` commands; `{session}` and `{command}`
//!   in a value are the session id and the command (the operator's
//!   `grants.execEnv` says which names are set).
//! - every observe-only hook (`after_tool_call` too): one log line (`observed <hook> …`), an audit trail.

use clawhost_sdk::{
    export_plugin, log, AgentStartEvent, BeforeCompactionEvent, BeforePromptBuildEvent, ExecEvent,
    Finalize, FinalizeEvent, Hook, Level, ModelOverride, ModelResolveEvent, Observed, Plugin,
    PromptEdit, TurnContext, TurnEvent,
};

#[derive(Default)]
struct ContextHooks;

impl Plugin for ContextHooks {
    fn hooks(&self) -> Vec<(Hook, i32)> {
        let mut hooks = vec![
            (Hook::BeforePromptBuild, 10),
            (Hook::BeforeModelResolve, 10),
            (Hook::BeforeAgentStart, 10),
            (Hook::BeforeAgentRun, 10),
            (Hook::BeforeAgentReply, 10),
            (Hook::BeforeAgentFinalize, 10),
            (Hook::AgentTurnPrepare, 10),
            (Hook::ResolveExecEnv, 10),
        ];
        for hook in [
            Hook::BeforeCompaction,
            Hook::ModelCallStarted,
            Hook::ModelCallEnded,
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

    fn agent_turn_prepare(&self, event: TurnEvent) -> Option<TurnContext> {
        let config = clawhost_sdk::config();
        let context = config["turnContext"].as_str()?;
        Some(TurnContext {
            prepend_context: None,
            append_context: Some(format!("[{}] {context}", event.runtime)),
        })
    }

    fn resolve_exec_env(&self, event: ExecEvent) -> Vec<(String, String)> {
        let config = clawhost_sdk::config();
        let Some(vars) = config["execEnv"].as_object() else {
            return Vec::new();
        };
        let session = event.context.session_id.unwrap_or_default();
        vars.iter()
            .map(|(name, value)| {
                let value = value
                    .as_str()
                    .unwrap_or_default()
                    .replace("{session}", &session)
                    .replace("{command}", &event.command);
                (name.clone(), value)
            })
            .collect()
    }

    fn before_model_resolve(&self, _event: ModelResolveEvent) -> Option<ModelOverride> {
        let config = clawhost_sdk::config();
        let (provider, model) = config["model"].as_str()?.split_once('/')?;
        Some(ModelOverride {
            provider: Some(provider.into()),
            model: Some(model.into()),
        })
    }

    fn before_agent_run(&self, event: TurnEvent) -> Result<(), String> {
        match clawhost_sdk::config()["blockRuntime"].as_str() {
            Some(runtime) if event.runtime == runtime => {
                Err(format!("turns on `{runtime}` are not allowed here"))
            }
            _ => Ok(()),
        }
    }

    fn before_agent_reply(&self, event: TurnEvent) -> Option<String> {
        clawhost_sdk::config()["cannedReplies"][event.prompt.trim()]
            .as_str()
            .map(str::to_string)
    }

    fn before_agent_finalize(&self, event: FinalizeEvent) -> Finalize {
        match clawhost_sdk::config()["mustMention"].as_str() {
            Some(word) if !event.answer.contains(word) => {
                Finalize::Revise(format!("Please mention {word}."))
            }
            _ => Finalize::Proceed,
        }
    }

    fn before_agent_start(&self, event: AgentStartEvent) -> Result<(), String> {
        match clawhost_sdk::config()["stopWord"].as_str() {
            Some(word) if event.prompt.contains(word) => {
                Err(format!("the message contains `{word}`"))
            }
            _ => Ok(()),
        }
    }

    fn compaction_priority(&self) -> Option<i32> {
        (clawhost_sdk::config()["summarize"].as_bool() == Some(true)).then_some(10)
    }

    fn summarize(&self, event: BeforeCompactionEvent) -> Option<String> {
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
                "observed llm_input {} attempt={} history={} tools={} prompt={}",
                e.model_ref,
                e.attempt,
                e.history.len(),
                e.tools.join(","),
                e.prompt
            ),
            Observed::LlmOutput(e) => format!(
                "observed llm_output {} attempt={} texts={} output_tokens={}",
                e.model_ref,
                e.attempt,
                e.texts.join("|"),
                e.usage.output_tokens
            ),
            Observed::ModelCallStarted(c) => format!(
                "observed model_call_started {} {}/{} api={}",
                c.call_id, c.provider, c.model, c.api
            ),
            Observed::ModelCallEnded(e) => format!(
                "observed model_call_ended {} ok={}",
                e.call.call_id,
                e.outcome.is_ok()
            ),
            Observed::BeforeCompaction(e) => format!(
                "observed before_compaction compacting={} of {}",
                e.compacted_count, e.message_count
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
