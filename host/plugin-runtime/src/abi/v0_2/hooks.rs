//! 0.2 hook events and outcomes, family by family.

use clawhost_hooks::{
    AfterCompactionEvent, AfterToolCallEvent, AgentEndEvent, BeforeCompactionEvent,
    BeforePromptBuildEvent, BeforeResetEvent, BeforeToolCallEvent, BeforeToolCallOutcome,
    HookError, HookKind, HookOutcome, LlmInputEvent, LlmOutputEvent, PromptEdit, SessionEndEvent,
    SessionEndReason, SessionStartEvent, ToolResultOutcome,
};

use super::bindings::exports::openclaw::plugin::{
    model_hooks as mh, prompt_hooks as ph, session_hooks as sh, tool_hooks as th,
    transcript_hooks as xh,
};
use super::convert::context;
use super::wit;
use crate::abi::{json, json_text, total_len};

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

pub(super) fn before_tool_call(e: &BeforeToolCallEvent) -> th::BeforeToolCallEvent {
    th::BeforeToolCallEvent {
        tool: e.tool.clone(),
        call_id: e.call_id.clone(),
        params: json_text(&e.params),
        tool_plugin: e.tool_plugin.clone(),
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
        th::BeforeToolCallOutcome::Rewrite(p) => BeforeToolCallOutcome::Rewrite(
            json(&p, "rewritten parameters").map_err(HookError::Failed)?,
        ),
    }))
}

pub(super) fn after_tool_call(e: &AfterToolCallEvent) -> th::AfterToolCallEvent {
    th::AfterToolCallEvent {
        tool: e.tool.clone(),
        call_id: e.call_id.clone(),
        params: json_text(&e.params),
        outcome: e.outcome.as_ref().map(json_text).map_err(Clone::clone),
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
            ToolResultOutcome::Replace(Ok(
                json(&v, "replacement result").map_err(HookError::Failed)?
            ))
        }
        th::ToolResultOutcome::Replace(Err(e)) => ToolResultOutcome::Replace(Err(e)),
    }))
}

pub(super) fn before_prompt_build(e: &BeforePromptBuildEvent) -> ph::BeforePromptBuildEvent {
    ph::BeforePromptBuildEvent {
        session_id: e.session_id.clone(),
        agent_id: e.agent_id.clone(),
        system: e.system.clone(),
        prompt: e.prompt.clone(),
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

pub(super) fn llm_input(e: &LlmInputEvent) -> mh::LlmInputEvent {
    mh::LlmInputEvent {
        model_ref: e.model_ref.clone(),
        system: e.system.clone(),
        message_count: e.message_count,
        tool_count: e.tool_count,
    }
}

pub(super) fn llm_output(e: &LlmOutputEvent) -> mh::LlmOutputEvent {
    mh::LlmOutputEvent {
        model_ref: e.model_ref.clone(),
        text: e.text.clone(),
        tool_call_count: e.tool_call_count,
        input_tokens: e.input_tokens,
        output_tokens: e.output_tokens,
    }
}

pub(super) fn session_start(e: &SessionStartEvent) -> sh::SessionStartEvent {
    sh::SessionStartEvent {
        session_id: e.session_id.clone(),
        agent_id: e.agent_id.clone(),
        resumed: e.resumed,
    }
}

pub(super) fn session_end(e: &SessionEndEvent) -> sh::SessionEndEvent {
    sh::SessionEndEvent {
        session_id: e.session_id.clone(),
        agent_id: e.agent_id.clone(),
        reason: match e.reason {
            SessionEndReason::New => wit::SessionEndReason::New,
            SessionEndReason::Reset => wit::SessionEndReason::Reset,
            SessionEndReason::Quit => wit::SessionEndReason::Quit,
        },
    }
}

pub(super) fn agent_end(e: &AgentEndEvent) -> sh::AgentEndEvent {
    sh::AgentEndEvent {
        session_id: e.session_id.clone(),
        agent_id: e.agent_id.clone(),
        success: e.success,
        text: e.text.clone(),
        iterations: e.iterations,
    }
}

pub(super) fn before_reset(e: &BeforeResetEvent) -> sh::BeforeResetEvent {
    sh::BeforeResetEvent {
        session_id: e.session_id.clone(),
        agent_id: e.agent_id.clone(),
        message_count: e.message_count,
    }
}

pub(super) fn before_compaction(e: &BeforeCompactionEvent) -> xh::BeforeCompactionEvent {
    xh::BeforeCompactionEvent {
        session_id: e.session_id.clone(),
        message_count: e.message_count,
        token_count: e.token_count,
        compacted_count: e.compacted_count,
        transcript: e.transcript.clone(),
    }
}

pub(super) fn before_compaction_len(o: &xh::BeforeCompactionOutcome) -> usize {
    match o {
        xh::BeforeCompactionOutcome::Summary(s) => s.len(),
        xh::BeforeCompactionOutcome::Proceed => 0,
    }
}

pub(super) fn before_compaction_outcome(o: xh::BeforeCompactionOutcome) -> HookOutcome {
    HookOutcome::BeforeCompaction(match o {
        xh::BeforeCompactionOutcome::Proceed => None,
        xh::BeforeCompactionOutcome::Summary(s) => Some(s),
    })
}

pub(super) fn after_compaction(e: &AfterCompactionEvent) -> xh::AfterCompactionEvent {
    xh::AfterCompactionEvent {
        session_id: e.session_id.clone(),
        message_count: e.message_count,
        token_count: e.token_count,
        compacted_count: e.compacted_count,
    }
}
