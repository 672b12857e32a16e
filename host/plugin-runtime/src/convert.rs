//! Conversions between the WIT types and the host's typed hook catalog.

use clawhost_agent_core::ToolSpec;
use clawhost_hooks::{
    AfterToolCallOutcome, BeforeToolCallOutcome, CallContext, HookError, HookEvent, HookKind,
    HookOutcome, PromptEdit,
};

use crate::bindings::wit;

/// JSON text of a value. `serde_json::to_string` writes straight into a
/// buffer; `Value`'s `Display` goes through `fmt` and is several times slower.
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).expect("a JSON value always serializes")
}

pub(crate) fn context(ctx: &CallContext) -> wit::CallContext {
    wit::CallContext {
        agent_id: ctx.agent_id.clone(),
        session_id: ctx.session_id.clone(),
        model_ref: ctx.model_ref.clone(),
    }
}

pub(crate) fn hook_kind(kind: wit::HookKind) -> HookKind {
    match kind {
        wit::HookKind::BeforeToolCall => HookKind::BeforeToolCall,
        wit::HookKind::AfterToolCall => HookKind::AfterToolCall,
        wit::HookKind::SessionStart => HookKind::SessionStart,
        wit::HookKind::SessionEnd => HookKind::SessionEnd,
        wit::HookKind::BeforePromptBuild => HookKind::BeforePromptBuild,
        wit::HookKind::LlmInput => HookKind::LlmInput,
        wit::HookKind::LlmOutput => HookKind::LlmOutput,
        wit::HookKind::BeforeCompaction => HookKind::BeforeCompaction,
        wit::HookKind::AfterCompaction => HookKind::AfterCompaction,
        wit::HookKind::AgentEnd => HookKind::AgentEnd,
    }
}

pub(crate) fn event(event: &HookEvent) -> wit::HookEvent {
    match event {
        HookEvent::BeforeToolCall(e) => wit::HookEvent::BeforeToolCall(wit::BeforeToolCallEvent {
            tool: e.tool.clone(),
            call_id: e.call_id.clone(),
            params: json_text(&e.params),
            tool_plugin: e.tool_plugin.clone(),
            context: context(&e.context),
        }),
        HookEvent::AfterToolCall(e) => wit::HookEvent::AfterToolCall(wit::AfterToolCallEvent {
            tool: e.tool.clone(),
            call_id: e.call_id.clone(),
            params: json_text(&e.params),
            outcome: e.outcome.as_ref().map(json_text).map_err(Clone::clone),
            duration_ms: e.duration_ms,
            context: context(&e.context),
        }),
        HookEvent::SessionStart(e) => wit::HookEvent::SessionStart(wit::SessionStartEvent {
            session_id: e.session_id.clone(),
            agent_id: e.agent_id.clone(),
            resumed: e.resumed,
        }),
        HookEvent::SessionEnd(e) => wit::HookEvent::SessionEnd(wit::SessionEndEvent {
            session_id: e.session_id.clone(),
            agent_id: e.agent_id.clone(),
            reason: e.reason.clone(),
        }),
        HookEvent::BeforePromptBuild(e) => {
            wit::HookEvent::BeforePromptBuild(wit::BeforePromptBuildEvent {
                session_id: e.session_id.clone(),
                agent_id: e.agent_id.clone(),
                system: e.system.clone(),
                prompt: e.prompt.clone(),
            })
        }
        HookEvent::LlmInput(e) => wit::HookEvent::LlmInput(wit::LlmInputEvent {
            model_ref: e.model_ref.clone(),
            system: e.system.clone(),
            message_count: e.message_count,
            tool_count: e.tool_count,
        }),
        HookEvent::LlmOutput(e) => wit::HookEvent::LlmOutput(wit::LlmOutputEvent {
            model_ref: e.model_ref.clone(),
            text: e.text.clone(),
            tool_call_count: e.tool_call_count,
            input_tokens: e.input_tokens,
            output_tokens: e.output_tokens,
        }),
        HookEvent::BeforeCompaction(e) => {
            wit::HookEvent::BeforeCompaction(wit::BeforeCompactionEvent {
                session_id: e.session_id.clone(),
                message_count: e.message_count,
                token_count: e.token_count,
                compacted_count: e.compacted_count,
                transcript: e.transcript.clone(),
            })
        }
        HookEvent::AfterCompaction(e) => {
            wit::HookEvent::AfterCompaction(wit::AfterCompactionEvent {
                session_id: e.session_id.clone(),
                message_count: e.message_count,
                token_count: e.token_count,
                compacted_count: e.compacted_count,
            })
        }
        HookEvent::AgentEnd(e) => wit::HookEvent::AgentEnd(wit::AgentEndEvent {
            session_id: e.session_id.clone(),
            agent_id: e.agent_id.clone(),
            success: e.success,
            text: e.text.clone(),
            iterations: e.iterations,
        }),
    }
}

fn json(text: &str, what: &str) -> Result<serde_json::Value, HookError> {
    serde_json::from_str(text)
        .map_err(|e| HookError::Failed(format!("the plugin's {what} is not valid JSON: {e}")))
}

pub(crate) fn outcome(outcome: wit::HookOutcome) -> Result<HookOutcome, HookError> {
    Ok(match outcome {
        wit::HookOutcome::BeforeToolCall(o) => HookOutcome::BeforeToolCall(match o {
            wit::BeforeToolCallOutcome::Allow => BeforeToolCallOutcome::Allow,
            wit::BeforeToolCallOutcome::Block(reason) => BeforeToolCallOutcome::Block(reason),
            wit::BeforeToolCallOutcome::Rewrite(p) => {
                BeforeToolCallOutcome::Rewrite(json(&p, "rewritten parameters")?)
            }
        }),
        wit::HookOutcome::AfterToolCall(o) => HookOutcome::AfterToolCall(match o {
            wit::AfterToolCallOutcome::Keep => AfterToolCallOutcome::Keep,
            wit::AfterToolCallOutcome::Replace(Ok(v)) => {
                AfterToolCallOutcome::Replace(Ok(json(&v, "replacement result")?))
            }
            wit::AfterToolCallOutcome::Replace(Err(e)) => AfterToolCallOutcome::Replace(Err(e)),
        }),
        wit::HookOutcome::BeforePromptBuild(o) => HookOutcome::BeforePromptBuild(match o {
            wit::BeforePromptBuildOutcome::Keep => None,
            wit::BeforePromptBuildOutcome::Edit(e) => Some(PromptEdit {
                prepend: e.prepend,
                append: e.append,
                system: e.system,
            }),
        }),
        wit::HookOutcome::BeforeCompaction(o) => HookOutcome::BeforeCompaction(match o {
            wit::BeforeCompactionOutcome::Proceed => None,
            wit::BeforeCompactionOutcome::Summary(s) => Some(s),
        }),
        wit::HookOutcome::Observed => HookOutcome::Observed,
    })
}

/// A registration checked and converted to host types.
#[derive(Debug, Clone)]
pub struct Registration {
    /// Plugin id.
    pub id: String,
    /// Plugin version.
    pub version: String,
    /// Tools.
    pub tools: Vec<ToolSpec>,
    /// Hook subscriptions with priority.
    pub hooks: Vec<(HookKind, i32)>,
    /// Harness ids.
    pub harnesses: Vec<String>,
}

/// Check what `register` returned against the manifest id and convert it.
pub(crate) fn registration(
    manifest_id: &str,
    r: wit::Registration,
    exports_harness: bool,
) -> Result<Registration, String> {
    if r.id != manifest_id {
        return Err(format!(
            "register() returned id `{}` but the manifest says `{manifest_id}`",
            r.id
        ));
    }
    let mut tools = Vec::new();
    for t in r.tools {
        let parameters: serde_json::Value = serde_json::from_str(&t.parameters)
            .map_err(|e| format!("tool `{}`: parameters is not valid JSON: {e}", t.name))?;
        let spec = ToolSpec {
            name: t.name,
            description: t.description,
            parameters,
        };
        clawhost_tools::compile_schema(&spec).map_err(|e| e.to_string())?;
        if tools.iter().any(|s: &ToolSpec| s.name == spec.name) {
            return Err(format!("tool `{}` is registered twice", spec.name));
        }
        tools.push(spec);
    }
    let mut hooks: Vec<(HookKind, i32)> = Vec::new();
    for h in r.hooks {
        let kind = hook_kind(h.hook);
        if hooks.iter().any(|(k, _)| *k == kind) {
            return Err(format!("hook `{}` is subscribed twice", kind.name()));
        }
        hooks.push((kind, h.priority));
    }
    match (exports_harness, r.harnesses.len()) {
        (false, 0) | (true, 1) => {}
        (false, _) => {
            return Err("it declares harnesses but does not export the harness interface".into())
        }
        (true, 0) => {
            return Err("it exports the harness interface but declares no harness id".into())
        }
        (true, _) => return Err("a plugin provides at most one harness".into()),
    }
    if exports_harness && (!tools.is_empty() || !hooks.is_empty()) {
        // Its tool or hook calls would re-enter the instance running the turn.
        return Err("a harness plugin may not also provide tools or hooks".into());
    }
    for h in &r.harnesses {
        let ok = !h.is_empty()
            && h.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !ok
            || matches!(
                h.as_str(),
                "openclaw" | "pi" | "auto" | "default" | "codex-app-server"
            )
        {
            return Err(format!("harness id `{h}` is invalid or reserved"));
        }
    }
    Ok(Registration {
        id: r.id,
        version: r.version,
        tools,
        hooks,
        harnesses: r.harnesses,
    })
}
