//! 0.1 hook events and outcomes: one `hook-event` variant, one `hook-outcome`.

use clawhost_hooks::{
    BeforeToolCallOutcome, CallContext, HookError, HookEvent, HookKind, HookOutcome, PromptEdit,
    ToolResultOutcome,
};

use super::wit;
use crate::abi::{json, outcome_text, total_len};

/// The run's context as the guest sees it, pointing into the host's.
pub(crate) fn context(ctx: &CallContext) -> wit::CallContext<'_> {
    wit::CallContext {
        agent_id: &ctx.agent_id,
        session_id: ctx.session_id.as_deref(),
        model_ref: &ctx.model_ref,
    }
}

pub(crate) fn hook_kind(kind: wit::HookKind) -> HookKind {
    match kind {
        wit::HookKind::BeforeToolCall => HookKind::BeforeToolCall,
        // 0.1's after-tool-call may replace the result: it is the
        // tool-result middleware now, delivered only with `grants.toolResults`.
        wit::HookKind::AfterToolCall => HookKind::ToolResult,
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

/// The event in 0.1 terms, pointing into the host's, given an `llm_output`
/// event's reply text (its texts joined); `None` for hooks 0.1 does not have
/// (a 0.1 plugin cannot subscribe to them).
pub(crate) fn event<'a>(event: HookEvent<'a>, reply_text: &'a str) -> Option<wit::HookEvent<'a>> {
    Some(match event {
        HookEvent::BeforeToolCall(e) => wit::HookEvent::BeforeToolCall(wit::BeforeToolCallEvent {
            tool: &e.tool,
            call_id: &e.call_id,
            params: e.params.text(),
            tool_plugin: e.tool_plugin.as_deref(),
            context: context(&e.context),
        }),
        HookEvent::AfterToolCall(e) | HookEvent::ToolResult(e) => {
            wit::HookEvent::AfterToolCall(wit::AfterToolCallEvent {
                tool: &e.tool,
                call_id: &e.call_id,
                params: e.params.text(),
                outcome: outcome_text(&e.outcome),
                duration_ms: e.duration_ms,
                context: context(&e.context),
            })
        }
        HookEvent::SessionStart(e) => wit::HookEvent::SessionStart(wit::SessionStartEvent {
            session_id: &e.session_id,
            agent_id: &e.agent_id,
            resumed: e.resumed,
        }),
        HookEvent::SessionEnd(e) => wit::HookEvent::SessionEnd(wit::SessionEndEvent {
            session_id: &e.session_id,
            agent_id: &e.agent_id,
            reason: e.reason.as_str(),
        }),
        HookEvent::BeforePromptBuild(e) => {
            wit::HookEvent::BeforePromptBuild(wit::BeforePromptBuildEvent {
                session_id: e.session_id.as_deref(),
                agent_id: &e.agent_id,
                system: e.system.as_deref(),
                prompt: &e.prompt,
            })
        }
        HookEvent::LlmInput(e) => wit::HookEvent::LlmInput(wit::LlmInputEvent {
            model_ref: &e.model_ref,
            system: e.system.as_deref(),
            message_count: e.message_count(),
            tool_count: e.tool_count(),
        }),
        HookEvent::LlmOutput(e) => wit::HookEvent::LlmOutput(wit::LlmOutputEvent {
            model_ref: &e.model_ref,
            text: reply_text,
            tool_call_count: e.tool_calls,
            input_tokens: e.usage.input_tokens,
            output_tokens: e.usage.output_tokens,
        }),
        HookEvent::BeforeCompaction(e) => {
            wit::HookEvent::BeforeCompaction(wit::BeforeCompactionEvent {
                session_id: e.session_id.as_deref(),
                message_count: e.message_count,
                token_count: e.token_count,
                compacted_count: e.compacted_count,
                transcript: &e.transcript,
            })
        }
        HookEvent::AfterCompaction(e) => {
            wit::HookEvent::AfterCompaction(wit::AfterCompactionEvent {
                session_id: e.session_id.as_deref(),
                message_count: e.message_count,
                token_count: e.token_count,
                compacted_count: e.compacted_count,
            })
        }
        HookEvent::AgentEnd(e) => wit::HookEvent::AgentEnd(wit::AgentEndEvent {
            session_id: e.session_id.as_deref(),
            agent_id: &e.agent_id,
            success: e.success,
            text: &e.text,
            iterations: e.iterations,
        }),
        HookEvent::BeforeReset(_)
        | HookEvent::BeforeModelResolve(_)
        | HookEvent::BeforeAgentStart(_)
        | HookEvent::ModelCallStarted(_)
        | HookEvent::ModelCallEnded(_)
        | HookEvent::CompactionProvider(_)
        | HookEvent::ToolResultPersist(_)
        | HookEvent::BeforeMessageWrite(_)
        | HookEvent::BeforeAgentRun(_)
        | HookEvent::BeforeAgentReply(_)
        | HookEvent::BeforeAgentFinalize(_)
        | HookEvent::AgentTurnPrepare(_)
        | HookEvent::ResolveExecEnv(_) => return None,
    })
}

/// Size of the largest text an outcome carries.
pub(crate) fn largest_text(outcome: &wit::HookOutcome) -> usize {
    use wit::{AfterToolCallOutcome as A, BeforeToolCallOutcome as B, HookOutcome as H};
    match outcome {
        H::BeforeToolCall(B::Block(s) | B::Rewrite(s)) => s.len(),
        H::AfterToolCall(A::Replace(Ok(s) | Err(s))) => s.len(),
        H::BeforePromptBuild(wit::BeforePromptBuildOutcome::Edit(e)) => {
            total_len(&[&e.prepend, &e.append, &e.system])
        }
        H::BeforeCompaction(wit::BeforeCompactionOutcome::Summary(s)) => s.len(),
        _ => 0,
    }
}

/// The outcome in host terms; it must answer the hook that was asked.
pub(crate) fn outcome(
    outcome: wit::HookOutcome,
    asked: HookKind,
) -> Result<HookOutcome, HookError> {
    let outcome = match outcome {
        wit::HookOutcome::BeforeToolCall(o) => HookOutcome::BeforeToolCall(match o {
            wit::BeforeToolCallOutcome::Allow => BeforeToolCallOutcome::Allow,
            wit::BeforeToolCallOutcome::Block(reason) => BeforeToolCallOutcome::Block(reason),
            wit::BeforeToolCallOutcome::Rewrite(p) => {
                BeforeToolCallOutcome::Rewrite(json(&p, "rewritten parameters")?)
            }
        }),
        wit::HookOutcome::AfterToolCall(o) => HookOutcome::ToolResult(match o {
            wit::AfterToolCallOutcome::Keep => ToolResultOutcome::Keep,
            wit::AfterToolCallOutcome::Replace(Ok(v)) => {
                ToolResultOutcome::Replace(Ok(json(&v, "replacement result")?))
            }
            wit::AfterToolCallOutcome::Replace(Err(e)) => {
                ToolResultOutcome::Replace(Err(clawhost_agent_core::ToolError::Failed(e)))
            }
        }),
        wit::HookOutcome::BeforePromptBuild(o) => HookOutcome::BeforePromptBuild(match o {
            wit::BeforePromptBuildOutcome::Keep => None,
            wit::BeforePromptBuildOutcome::Edit(e) => Some(PromptEdit {
                prepend_context: e.prepend,
                append_context: e.append,
                system_prompt: e.system,
                ..PromptEdit::default()
            }),
        }),
        // `before_compaction` is observe-only now: a summary a 0.1 plugin
        // returns is not used (summaries come from the granted
        // compaction-provider seam of API 0.2.1).
        wit::HookOutcome::BeforeCompaction(_) | wit::HookOutcome::Observed => {
            return HookOutcome::observed(asked)
                .ok_or_else(|| HookError::Failed(format!("answered observed to a {asked} event")))
        }
    };
    if outcome.kind() == asked {
        Ok(outcome)
    } else {
        Err(HookError::WrongOutcome {
            asked,
            answered: outcome.kind(),
        })
    }
}
