//! 0.2 hook events and outcomes, family by family.

use clawhost_agent_core::{ApprovalDecision, ApprovalRequest, Severity, TimeoutBehavior};
use clawhost_hooks::{
    AfterCompactionEvent, AfterToolCallEvent, AgentEndEvent, AgentStartEvent,
    ApprovalResolvedEvent, BeforeCompactionEvent, BeforePromptBuildEvent, BeforeResetEvent,
    BeforeToolCallEvent, BeforeToolCallOutcome, HookError, HookKind, HookOutcome, LlmInputEvent,
    LlmOutputEvent, MessageWriteEvent, MessageWriteOutcome, ModelCall, ModelCallEndedEvent,
    ModelOverride, ModelResolveEvent, PromptEdit, SessionEndEvent, SessionEndReason,
    SessionStartEvent, ToolResultOutcome, ToolResultPersistEvent,
};

use super::bindings::exports::openclaw::plugin::{
    model_hooks as mh, persist_hooks as pe, prompt_hooks as ph, run_hooks as rh,
    session_hooks as sh, tool_gate as tg, tool_hooks as th, transcript_hooks as xh,
};
use super::convert::{context, from_message};
use super::wit;
use crate::abi::{json, outcome_text, total_len};

pub(super) fn tool_hook(h: th::ToolHook) -> HookKind {
    match h {
        th::ToolHook::BeforeToolCall => HookKind::BeforeToolCall,
        th::ToolHook::AfterToolCall => HookKind::AfterToolCall,
        th::ToolHook::ToolResult => HookKind::ToolResult,
    }
}

pub(super) fn prompt_hook(h: ph::PromptHook) -> HookKind {
    match h {
        ph::PromptHook::BeforePromptBuild => HookKind::BeforePromptBuild,
    }
}

pub(super) fn model_hook(h: mh::ModelHook) -> HookKind {
    match h {
        mh::ModelHook::LlmInput => HookKind::LlmInput,
        mh::ModelHook::LlmOutput => HookKind::LlmOutput,
    }
}

pub(super) fn session_hook(h: sh::SessionHook) -> HookKind {
    match h {
        sh::SessionHook::SessionStart => HookKind::SessionStart,
        sh::SessionHook::SessionEnd => HookKind::SessionEnd,
        sh::SessionHook::AgentEnd => HookKind::AgentEnd,
        sh::SessionHook::BeforeReset => HookKind::BeforeReset,
    }
}

pub(super) fn transcript_hook(h: xh::TranscriptHook) -> HookKind {
    match h {
        xh::TranscriptHook::BeforeCompaction => HookKind::BeforeCompaction,
        xh::TranscriptHook::AfterCompaction => HookKind::AfterCompaction,
    }
}

pub(super) fn before_tool_call(e: &BeforeToolCallEvent) -> th::BeforeToolCallEvent<'_> {
    th::BeforeToolCallEvent {
        tool: &e.tool,
        call_id: &e.call_id,
        params: e.params.text(),
        tool_plugin: e.tool_plugin.as_deref(),
        context: context(&e.context),
    }
}

pub(super) fn before_tool_call_len(o: &th::BeforeToolCallOutcome) -> usize {
    match o {
        th::BeforeToolCallOutcome::Block(s) | th::BeforeToolCallOutcome::Rewrite(s) => s.len(),
        th::BeforeToolCallOutcome::Allow => 0,
    }
}

pub(super) fn before_tool_call_outcome(
    o: th::BeforeToolCallOutcome,
) -> Result<HookOutcome, HookError> {
    Ok(HookOutcome::BeforeToolCall(match o {
        th::BeforeToolCallOutcome::Allow => BeforeToolCallOutcome::Allow,
        th::BeforeToolCallOutcome::Block(reason) => BeforeToolCallOutcome::Block(reason),
        th::BeforeToolCallOutcome::Rewrite(p) => {
            BeforeToolCallOutcome::Rewrite(json(&p, "rewritten parameters")?)
        }
    }))
}

pub(super) fn after_tool_call(e: &AfterToolCallEvent) -> th::AfterToolCallEvent<'_> {
    th::AfterToolCallEvent {
        tool: &e.tool,
        call_id: &e.call_id,
        params: e.params.text(),
        outcome: outcome_text(&e.outcome),
        duration_ms: e.duration_ms,
        context: context(&e.context),
    }
}

pub(super) fn tool_result_len(o: &th::ToolResultOutcome) -> usize {
    match o {
        th::ToolResultOutcome::Replace(Ok(s) | Err(s)) => s.len(),
        th::ToolResultOutcome::Keep => 0,
    }
}

pub(super) fn tool_result_outcome(o: th::ToolResultOutcome) -> Result<HookOutcome, HookError> {
    Ok(HookOutcome::ToolResult(match o {
        th::ToolResultOutcome::Keep => ToolResultOutcome::Keep,
        th::ToolResultOutcome::Replace(Ok(v)) => {
            ToolResultOutcome::Replace(Ok(json(&v, "replacement result")?))
        }
        th::ToolResultOutcome::Replace(Err(e)) => {
            ToolResultOutcome::Replace(Err(clawhost_agent_core::ToolError::Failed(e)))
        }
    }))
}

pub(super) fn before_prompt_build(e: &BeforePromptBuildEvent) -> ph::BeforePromptBuildEvent<'_> {
    ph::BeforePromptBuildEvent {
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        system: e.system.as_deref(),
        prompt: &e.prompt,
    }
}

pub(super) fn before_prompt_build_len(o: &ph::BeforePromptBuildOutcome) -> usize {
    match o {
        ph::BeforePromptBuildOutcome::Edit(e) => total_len(&[
            &e.prepend_context,
            &e.append_context,
            &e.system_prompt,
            &e.prepend_system_context,
            &e.append_system_context,
        ]),
        ph::BeforePromptBuildOutcome::Keep => 0,
    }
}

pub(super) fn before_prompt_build_outcome(o: ph::BeforePromptBuildOutcome) -> HookOutcome {
    HookOutcome::BeforePromptBuild(match o {
        ph::BeforePromptBuildOutcome::Keep => None,
        ph::BeforePromptBuildOutcome::Edit(e) => Some(PromptEdit {
            prepend_context: e.prepend_context,
            append_context: e.append_context,
            system_prompt: e.system_prompt,
            prepend_system_context: e.prepend_system_context,
            append_system_context: e.append_system_context,
        }),
    })
}

/// `llm-input` in its 0.2.0 (`model-hooks`) summary form.
pub(super) fn llm_input(e: &LlmInputEvent) -> mh::LlmInputEvent<'_> {
    mh::LlmInputEvent {
        model_ref: &e.model_ref,
        system: e.system.as_deref(),
        message_count: e.message_count(),
        tool_count: e.tool_count(),
    }
}

/// `llm-output` in its 0.2.0 (`model-hooks`) summary form, given the
/// reply's text (its texts joined: [`LlmOutputEvent::text`]).
pub(super) fn llm_output<'a>(e: &'a LlmOutputEvent, text: &'a str) -> mh::LlmOutputEvent<'a> {
    mh::LlmOutputEvent {
        model_ref: &e.model_ref,
        text,
        tool_call_count: e.tool_calls,
        input_tokens: e.usage.input_tokens,
        output_tokens: e.usage.output_tokens,
    }
}

pub(super) fn session_start(e: &SessionStartEvent) -> sh::SessionStartEvent<'_> {
    sh::SessionStartEvent {
        session_id: &e.session_id,
        agent_id: &e.agent_id,
        resumed: e.resumed,
    }
}

pub(super) fn session_end(e: &SessionEndEvent) -> sh::SessionEndEvent<'_> {
    sh::SessionEndEvent {
        session_id: &e.session_id,
        agent_id: &e.agent_id,
        reason: match e.reason {
            SessionEndReason::New => wit::SessionEndReason::New,
            SessionEndReason::Reset => wit::SessionEndReason::Reset,
            SessionEndReason::Quit => wit::SessionEndReason::Quit,
        },
    }
}

pub(super) fn agent_end(e: &AgentEndEvent) -> sh::AgentEndEvent<'_> {
    sh::AgentEndEvent {
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        success: e.success,
        text: &e.text,
        iterations: e.iterations,
    }
}

pub(super) fn before_reset(e: &BeforeResetEvent) -> sh::BeforeResetEvent<'_> {
    sh::BeforeResetEvent {
        session_id: &e.session_id,
        agent_id: &e.agent_id,
        message_count: e.message_count,
    }
}

pub(super) fn before_compaction(e: &BeforeCompactionEvent) -> xh::BeforeCompactionEvent<'_> {
    xh::BeforeCompactionEvent {
        session_id: e.session_id.as_deref(),
        message_count: e.message_count,
        token_count: e.token_count,
        compacted_count: e.compacted_count,
        transcript: &e.transcript,
    }
}

pub(super) fn before_compaction_len(o: &xh::BeforeCompactionOutcome) -> usize {
    match o {
        xh::BeforeCompactionOutcome::Summary(s) => s.len(),
        xh::BeforeCompactionOutcome::Proceed => 0,
    }
}

pub(super) fn after_compaction(e: &AfterCompactionEvent) -> xh::AfterCompactionEvent<'_> {
    xh::AfterCompactionEvent {
        session_id: e.session_id.as_deref(),
        message_count: e.message_count,
        token_count: e.token_count,
        compacted_count: e.compacted_count,
    }
}

// Families added in 0.2.1.

pub(super) fn persist_hook(h: pe::PersistHook) -> HookKind {
    match h {
        pe::PersistHook::ToolResultPersist => HookKind::ToolResultPersist,
        pe::PersistHook::BeforeMessageWrite => HookKind::BeforeMessageWrite,
    }
}

pub(super) fn gate_outcome_len(o: &tg::GateOutcome) -> usize {
    match o {
        tg::GateOutcome::Block(s) | tg::GateOutcome::Rewrite(s) => s.len(),
        tg::GateOutcome::RequireApproval(r) => r.title.len() + r.description.len(),
        tg::GateOutcome::Allow => 0,
    }
}

/// Longest approval title or description shown to an operator, in characters.
const MAX_APPROVAL_TEXT_CHARS: usize = 2_000;

pub(super) fn gate_outcome(o: tg::GateOutcome) -> Result<HookOutcome, HookError> {
    Ok(HookOutcome::BeforeToolCall(match o {
        tg::GateOutcome::Allow => BeforeToolCallOutcome::Allow,
        tg::GateOutcome::Block(reason) => BeforeToolCallOutcome::Block(reason),
        tg::GateOutcome::Rewrite(p) => {
            BeforeToolCallOutcome::Rewrite(json(&p, "rewritten parameters")?)
        }
        tg::GateOutcome::RequireApproval(r) => {
            if r.title.trim().is_empty() {
                return Err(HookError::Failed(
                    "an approval request needs a title".into(),
                ));
            }
            let clip = |t: String| match t.char_indices().nth(MAX_APPROVAL_TEXT_CHARS) {
                Some((at, _)) => format!("{}…", &t[..at]),
                None => t,
            };
            BeforeToolCallOutcome::RequireApproval(ApprovalRequest {
                title: clip(r.title),
                description: clip(r.description),
                severity: match r.severity {
                    tg::ApprovalSeverity::Info => Severity::Info,
                    tg::ApprovalSeverity::Warning => Severity::Warning,
                    tg::ApprovalSeverity::Critical => Severity::Critical,
                },
                timeout_ms: r.timeout_ms,
                timeout_behavior: match r.timeout_behavior {
                    tg::TimeoutBehavior::Deny => TimeoutBehavior::Deny,
                    tg::TimeoutBehavior::Allow => TimeoutBehavior::Allow,
                },
            })
        }
    }))
}

pub(super) fn approval_resolution(e: &ApprovalResolvedEvent) -> tg::ApprovalResolution<'_> {
    tg::ApprovalResolution {
        tool: &e.tool,
        call_id: &e.call_id,
        decision: match e.decision {
            ApprovalDecision::AllowOnce => tg::ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowAlways => tg::ApprovalDecision::AllowAlways,
            ApprovalDecision::Deny => tg::ApprovalDecision::Deny,
            ApprovalDecision::Timeout => tg::ApprovalDecision::Timeout,
            ApprovalDecision::Cancelled => tg::ApprovalDecision::Cancelled,
        },
        context: context(&e.context),
    }
}

pub(super) fn tool_result_persist(e: &ToolResultPersistEvent) -> pe::ToolResultPersistEvent<'_> {
    pe::ToolResultPersistEvent {
        tool: &e.tool,
        call_id: &e.call_id,
        content: &e.content,
        is_error: e.is_error,
        context: context(&e.context),
    }
}

pub(super) fn persist_outcome_len(o: &pe::ToolResultPersistOutcome) -> usize {
    match o {
        pe::ToolResultPersistOutcome::Replace(s) => s.len(),
        pe::ToolResultPersistOutcome::Keep => 0,
    }
}

pub(super) fn persist_outcome(o: pe::ToolResultPersistOutcome) -> HookOutcome {
    HookOutcome::ToolResultPersist(match o {
        pe::ToolResultPersistOutcome::Keep => None,
        pe::ToolResultPersistOutcome::Replace(s) => Some(s),
    })
}

/// A message about to be written, given the message converted
/// ([`super::convert::messages`]).
pub(super) fn message_write<'a>(
    e: &'a MessageWriteEvent,
    message: wit::MessageParam<'a>,
) -> pe::MessageWriteEvent<'a> {
    pe::MessageWriteEvent {
        session_id: &e.session_id,
        agent_id: &e.agent_id,
        message,
    }
}

fn message_len(m: &wit::MessageResult) -> usize {
    match m {
        wit::MessageResult::User(t) => t.len(),
        wit::MessageResult::Assistant(a) => {
            a.text.len()
                + a.tool_calls
                    .iter()
                    .map(|c| c.id.len() + c.name.len() + c.arguments.len())
                    .sum::<usize>()
        }
        wit::MessageResult::ToolResult(r) => r.call_id.len() + r.tool.len() + r.content.len(),
    }
}

pub(super) fn message_write_len(o: &pe::MessageWriteOutcome) -> usize {
    match o {
        pe::MessageWriteOutcome::Replace(m) => message_len(m),
        pe::MessageWriteOutcome::Block(s) => s.len(),
        pe::MessageWriteOutcome::Keep => 0,
    }
}

pub(super) fn message_write_outcome(o: pe::MessageWriteOutcome) -> Result<HookOutcome, HookError> {
    Ok(HookOutcome::BeforeMessageWrite(match o {
        pe::MessageWriteOutcome::Keep => MessageWriteOutcome::Keep,
        pe::MessageWriteOutcome::Replace(m) => MessageWriteOutcome::Replace(from_message(m)),
        pe::MessageWriteOutcome::Block(reason) => MessageWriteOutcome::Block(reason),
    }))
}

pub(super) fn run_hook(h: rh::RunHook) -> HookKind {
    match h {
        rh::RunHook::BeforeModelResolve => HookKind::BeforeModelResolve,
        rh::RunHook::BeforeAgentStart => HookKind::BeforeAgentStart,
        rh::RunHook::LlmInput => HookKind::LlmInput,
        rh::RunHook::LlmOutput => HookKind::LlmOutput,
        rh::RunHook::ModelCallStarted => HookKind::ModelCallStarted,
        rh::RunHook::ModelCallEnded => HookKind::ModelCallEnded,
    }
}

pub(super) fn model_resolve(e: &ModelResolveEvent) -> rh::ModelResolveEvent<'_> {
    rh::ModelResolveEvent {
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        prompt: &e.prompt,
        provider: &e.provider,
        model: &e.model,
    }
}

pub(super) fn model_resolve_len(o: &rh::ModelResolveOutcome) -> usize {
    match o {
        rh::ModelResolveOutcome::Override(o) => total_len(&[&o.provider, &o.model]),
        rh::ModelResolveOutcome::Keep => 0,
    }
}

pub(super) fn model_resolve_outcome(o: rh::ModelResolveOutcome) -> HookOutcome {
    HookOutcome::BeforeModelResolve(match o {
        rh::ModelResolveOutcome::Keep => None,
        rh::ModelResolveOutcome::Override(o) => Some(ModelOverride {
            provider: o.provider,
            model: o.model,
        }),
    })
}

pub(super) fn agent_start(e: &AgentStartEvent) -> rh::AgentStartEvent<'_> {
    rh::AgentStartEvent {
        run_id: &e.run_id,
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        model_ref: &e.model_ref,
        prompt: &e.prompt,
    }
}

pub(super) fn agent_start_len(o: &rh::AgentStartOutcome) -> usize {
    match o {
        rh::AgentStartOutcome::Block(s) => s.len(),
        rh::AgentStartOutcome::Allow => 0,
    }
}

pub(super) fn agent_start_outcome(o: rh::AgentStartOutcome) -> HookOutcome {
    HookOutcome::BeforeAgentStart(match o {
        rh::AgentStartOutcome::Allow => Ok(()),
        rh::AgentStartOutcome::Block(reason) => Err(clawhost_hooks::Blocked(reason)),
    })
}

/// `llm-input` in full (0.2.1 `run-hooks`), given the history converted
/// ([`super::convert::messages`]) and the tools' names.
pub(super) fn run_llm_input<'a>(
    e: &'a LlmInputEvent,
    history: &'a [wit::MessageParam<'a>],
    tools: &'a [&'a str],
) -> rh::LlmInputEvent<'a> {
    rh::LlmInputEvent {
        run_id: &e.run_id,
        attempt: e.attempt,
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        model_ref: &e.model_ref,
        system: e.system.as_deref(),
        prompt: &e.prompt,
        history,
        tools,
    }
}

/// `llm-output` in full (0.2.1 `run-hooks`), given its texts.
pub(super) fn run_llm_output<'a>(
    e: &'a LlmOutputEvent,
    texts: &'a [&'a str],
) -> rh::LlmOutputEvent<'a> {
    rh::LlmOutputEvent {
        run_id: &e.run_id,
        attempt: e.attempt,
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        model_ref: &e.model_ref,
        texts,
        usage: wit::Usage {
            input_tokens: e.usage.input_tokens,
            output_tokens: e.usage.output_tokens,
        },
    }
}

pub(super) fn model_call(e: &ModelCall) -> rh::ModelCall<'_> {
    rh::ModelCall {
        run_id: &e.run_id,
        call_id: &e.call_id,
        provider: &e.provider,
        model: &e.model,
        api: &e.api,
    }
}

pub(super) fn model_call_ended(e: &ModelCallEndedEvent) -> rh::ModelCallEndedEvent<'_> {
    use clawhost_agent_core::ModelErrorKind as K;
    rh::ModelCallEndedEvent {
        call: model_call(&e.call),
        duration_ms: e.duration_ms,
        outcome: match &e.outcome {
            Ok(u) => Ok(wit::Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
            }),
            Err(kind) => Err(match kind {
                K::ContextOverflow => rh::ModelCallFailure::ContextOverflow,
                K::RateLimited => rh::ModelCallFailure::RateLimited,
                K::Auth => rh::ModelCallFailure::Auth,
                K::Timeout => rh::ModelCallFailure::Timeout,
                K::HookBlocked => rh::ModelCallFailure::Refused,
                K::Unavailable => rh::ModelCallFailure::Unavailable,
                _ => rh::ModelCallFailure::Other,
            }),
        },
    }
}
