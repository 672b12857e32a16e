//! Glue from the generated WIT bindings to the [`Plugin`] trait.

use std::marker::PhantomData;

use crate::bindings::exports::openclaw::plugin::plugin::Guest;
use crate::wit;
use crate::{AfterDecision, AfterToolCall, BeforeDecision, BeforeToolCall, Json, Observed, Plugin, ToolCall};

/// Adapts a [`Plugin`] to the exported WIT interface; used by [`crate::export_plugin!`].
pub struct Adapter<P>(PhantomData<P>);

fn parse(json: &str) -> serde_json::Value {
    serde_json::from_str(json).unwrap_or(serde_json::Value::Null)
}

impl<P: Plugin> Guest for Adapter<P> {
    fn register() -> wit::Registration {
        P::register().into_wit()
    }

    fn call_tool(call: wit::ToolCall) -> Result<String, String> {
        let call = ToolCall {
            tool: call.tool,
            call_id: call.call_id,
            params: parse(&call.params),
            context: call.context,
        };
        P::call_tool(call).map(|v| v.to_string())
    }

    fn handle_hook(event: wit::HookEvent) -> wit::HookOutcome {
        match event {
            wit::HookEvent::BeforeToolCall(e) => {
                let decision = P::before_tool_call(BeforeToolCall {
                    tool: e.tool,
                    call_id: e.call_id,
                    params: Json::from_text(e.params),
                    tool_plugin: e.tool_plugin,
                    context: e.context,
                });
                wit::HookOutcome::BeforeToolCall(match decision {
                    BeforeDecision::Allow => wit::BeforeToolCallOutcome::Allow,
                    BeforeDecision::Block(reason) => wit::BeforeToolCallOutcome::Block(reason),
                    BeforeDecision::Rewrite(p) => {
                        wit::BeforeToolCallOutcome::Rewrite(p.to_string())
                    }
                })
            }
            wit::HookEvent::AfterToolCall(e) => {
                let decision = P::after_tool_call(AfterToolCall {
                    tool: e.tool,
                    call_id: e.call_id,
                    params: Json::from_text(e.params),
                    outcome: e.outcome.map(Json::from_text),
                    duration_ms: e.duration_ms,
                    context: e.context,
                });
                wit::HookOutcome::AfterToolCall(match decision {
                    AfterDecision::Keep => wit::AfterToolCallOutcome::Keep,
                    AfterDecision::Replace(r) => {
                        wit::AfterToolCallOutcome::Replace(r.map(|v| v.to_string()))
                    }
                })
            }
            wit::HookEvent::BeforePromptBuild(e) => wit::HookOutcome::BeforePromptBuild(match P::before_prompt_build(e) {
                Some(edit) => wit::BeforePromptBuildOutcome::Edit(edit),
                None => wit::BeforePromptBuildOutcome::Keep,
            }),
            wit::HookEvent::BeforeCompaction(e) => wit::HookOutcome::BeforeCompaction(match P::before_compaction(e) {
                Some(summary) => wit::BeforeCompactionOutcome::Summary(summary),
                None => wit::BeforeCompactionOutcome::Proceed,
            }),
            wit::HookEvent::SessionStart(e) => observed::<P>(Observed::SessionStart(e)),
            wit::HookEvent::SessionEnd(e) => observed::<P>(Observed::SessionEnd(e)),
            wit::HookEvent::LlmInput(e) => observed::<P>(Observed::LlmInput(e)),
            wit::HookEvent::LlmOutput(e) => observed::<P>(Observed::LlmOutput(e)),
            wit::HookEvent::AfterCompaction(e) => observed::<P>(Observed::AfterCompaction(e)),
            wit::HookEvent::AgentEnd(e) => observed::<P>(Observed::AgentEnd(e)),
        }
    }
}

fn observed<P: Plugin>(event: Observed) -> wit::HookOutcome {
    P::observe(event);
    wit::HookOutcome::Observed
}
