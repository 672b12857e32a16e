//! API 0.2.3 `prepare-hooks`: `agent_turn_prepare` and `resolve_exec_env`
//! events into the WIT types, the handlers' answers back into the host's.

use clawhost_hooks::{AgentRunEvent, ExecEnvEvent, HookKind, HookOutcome, PromptEdit};

use super::convert;
use super::ex::prepare_hooks as ph;

/// The host's name of a `prepare-hooks` subscription.
pub(super) fn prepare_hook(hook: ph::PrepareHook) -> HookKind {
    match hook {
        ph::PrepareHook::AgentTurnPrepare => HookKind::AgentTurnPrepare,
        ph::PrepareHook::ResolveExecEnv => HookKind::ResolveExecEnv,
    }
}

pub(super) fn turn_event(e: &AgentRunEvent) -> ph::TurnEvent<'_> {
    ph::TurnEvent {
        session_id: e.session_id.as_deref(),
        agent_id: &e.agent_id,
        runtime: &e.runtime,
        model_ref: &e.model_ref,
        prompt: &e.prompt,
    }
}

pub(super) fn exec_event(e: &ExecEnvEvent) -> ph::ExecEvent<'_> {
    ph::ExecEvent {
        command: &e.command,
        cwd: &e.cwd,
        call_id: &e.call_id,
        context: convert::context(&e.context),
    }
}

/// An `agent-turn-prepare` answer, and the size of its text.
pub(super) fn prepare_outcome(o: Option<ph::TurnContext>) -> (HookOutcome, usize) {
    let edit = o.map(|c| PromptEdit {
        prepend_context: c.prepend_context,
        append_context: c.append_context,
        ..PromptEdit::default()
    });
    let size = edit.as_ref().map_or(0, |e| {
        [&e.prepend_context, &e.append_context]
            .into_iter()
            .flatten()
            .map(String::len)
            .sum()
    });
    (HookOutcome::AgentTurnPrepare(edit), size)
}

/// A `resolve-exec-env` answer, and the size of its text.
pub(super) fn exec_env_outcome(vars: Vec<ph::EnvVar>) -> (HookOutcome, usize) {
    let size = vars.iter().map(|v| v.name.len() + v.value.len()).sum();
    let vars = vars.into_iter().map(|v| (v.name, v.value)).collect();
    (HookOutcome::ResolveExecEnv(vars), size)
}
