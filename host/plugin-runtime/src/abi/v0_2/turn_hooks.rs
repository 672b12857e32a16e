//! API 0.2.2 `turn-hooks`: the turn's events into the WIT types, the
//! handlers' answers back into the host's.

use clawhost_hooks::{
    AgentFinalizeEvent, AgentRunEvent, Blocked, FinalizeDecision, HookKind, HookOutcome,
};

use super::ex::turn_hooks as th;

/// The host's name of a `turn-hooks` subscription.
pub(super) fn turn_hook(hook: th::TurnHook) -> HookKind {
    match hook {
        th::TurnHook::BeforeAgentRun => HookKind::BeforeAgentRun,
        th::TurnHook::BeforeAgentReply => HookKind::BeforeAgentReply,
        th::TurnHook::BeforeAgentFinalize => HookKind::BeforeAgentFinalize,
    }
}

pub(super) fn turn_event(e: &AgentRunEvent) -> th::TurnEvent<'_> {
    th::TurnEvent {
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        runtime: &e.runtime,
        model_ref: &e.model_ref,
        prompt: &e.prompt,
    }
}

pub(super) fn finalize_event(e: &AgentFinalizeEvent) -> th::FinalizeEvent<'_> {
    th::FinalizeEvent {
        turn: turn_event(&e.run),
        answer: &e.answer,
        revisions: e.revisions,
    }
}

/// A `before-agent-run` answer, and the size of its text.
pub(super) fn run_outcome(o: th::RunOutcome) -> (HookOutcome, usize) {
    match o {
        th::RunOutcome::Allow => (HookOutcome::BeforeAgentRun(Ok(())), 0),
        th::RunOutcome::Block(reason) => {
            let size = reason.len();
            (HookOutcome::BeforeAgentRun(Err(Blocked(reason))), size)
        }
    }
}

/// A `before-agent-reply` answer, and the size of its text.
pub(super) fn reply_outcome(o: th::ReplyOutcome) -> (HookOutcome, usize) {
    match o {
        th::ReplyOutcome::Pass => (HookOutcome::BeforeAgentReply(None), 0),
        th::ReplyOutcome::Reply(text) => {
            let size = text.len();
            (HookOutcome::BeforeAgentReply(Some(text)), size)
        }
    }
}

/// A `before-agent-finalize` answer, and the size of its text.
pub(super) fn finalize_outcome(o: th::FinalizeOutcome) -> (HookOutcome, usize) {
    let (decision, size) = match o {
        th::FinalizeOutcome::Proceed => (FinalizeDecision::Proceed, 0),
        th::FinalizeOutcome::Revise(reason) => {
            let size = reason.len();
            (FinalizeDecision::Revise(reason), size)
        }
        th::FinalizeOutcome::Finalize => (FinalizeDecision::Finalize, 0),
    };
    (HookOutcome::BeforeAgentFinalize(decision), size)
}
