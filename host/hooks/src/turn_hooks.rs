//! The hooks around a turn on any runtime (API 0.2.2 `turn-hooks`):
//! `before_agent_run` gates the turn, `before_agent_reply` may answer in the
//! runtime's place, `before_agent_finalize` looks at the runtime's final
//! answer before it is accepted. The runner fires them the same way for the
//! built-in loop, plugin harnesses and native runtimes (Codex, ACP agents).

use crate::catalog::{Blocked, HookEvent, HookKind, HookOutcome};
use crate::runner::{HookDecisionRecord, HookError, HookRunner};

/// A turn about to run: `before_agent_run` and `before_agent_reply`.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRunEvent {
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// The runtime that will run it (`openclaw`, `codex`, `acp`, a plugin's).
    pub runtime: String,
    /// The model of the turn (`provider/model`).
    pub model_ref: String,
    /// The user's message.
    pub prompt: String,
}

/// `before_agent_finalize`: the runtime's natural final answer.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFinalizeEvent {
    /// The turn.
    pub run: AgentRunEvent,
    /// The answer the runtime gave.
    pub answer: String,
    /// Extra passes already asked for in this turn.
    pub revisions: u32,
}

/// What a `before_agent_finalize` handler decides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum FinalizeDecision {
    /// No opinion: the next handler is asked.
    #[default]
    Proceed,
    /// Ask the runtime for one more pass, with this reason as the next
    /// message of the turn.
    Revise(String),
    /// Accept the answer now (lower-priority handlers are not asked).
    Finalize,
}

/// Result of a turn hook: the decision, and what each handler decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnHookRun<T> {
    /// The decision (`None`: no handler decided anything).
    pub decided: Option<(String, T)>,
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
    /// Set when the turn must stop: a block, or a handler with fail policy
    /// `block` failed.
    pub blocked: Option<String>,
}

impl HookRunner {
    /// Run `before_agent_run`: handlers by descending priority; a block is
    /// terminal. Fails closed by default (a failing handler blocks unless its
    /// fail policy is `ignore`).
    pub async fn before_agent_run(&self, event: &AgentRunEvent) -> TurnHookRun<()> {
        let kind = HookKind::BeforeAgentRun;
        let mut run = TurnHookRun::default();
        for reg in self.handlers(kind) {
            let error = match reg.handler.handle(HookEvent::BeforeAgentRun(event)).await {
                Ok(HookOutcome::BeforeAgentRun(Ok(()))) => {
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, "allow".into()));
                    continue;
                }
                Ok(HookOutcome::BeforeAgentRun(Err(Blocked(reason)))) => {
                    run.decisions.push(Self::record(
                        kind,
                        &reg.plugin_id,
                        format!("block: {reason}"),
                    ));
                    run.blocked = Some(format!(
                        "plugin `{}` stopped the turn: {reason}",
                        reg.plugin_id
                    ));
                    return run;
                }
                other => HookError::unusable(kind, other),
            };
            if let Some(reason) = reg.failure(&error, &mut run.decisions) {
                run.blocked = Some(reason);
                return run;
            }
        }
        run
    }

    /// Run `before_agent_reply`: handlers by descending priority; the first
    /// reply wins and the runtime does not run.
    pub async fn before_agent_reply(&self, event: &AgentRunEvent) -> TurnHookRun<String> {
        let kind = HookKind::BeforeAgentReply;
        let mut run = TurnHookRun::default();
        for reg in self.handlers(kind) {
            let error = match reg.handler.handle(HookEvent::BeforeAgentReply(event)).await {
                Ok(HookOutcome::BeforeAgentReply(None)) => {
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, "pass".into()));
                    continue;
                }
                Ok(HookOutcome::BeforeAgentReply(Some(reply))) => {
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, "reply".into()));
                    run.decided = Some((reg.plugin_id.clone(), reply));
                    return run;
                }
                other => HookError::unusable(kind, other),
            };
            if let Some(reason) = reg.failure(&error, &mut run.decisions) {
                run.blocked = Some(reason);
                return run;
            }
        }
        run
    }

    /// Run `before_agent_finalize`: handlers by descending priority; the
    /// first that asks for a revision or finalizes decides.
    pub async fn before_agent_finalize(
        &self,
        event: &AgentFinalizeEvent,
    ) -> TurnHookRun<FinalizeDecision> {
        let kind = HookKind::BeforeAgentFinalize;
        let mut run = TurnHookRun::default();
        for reg in self.handlers(kind) {
            let error = match reg
                .handler
                .handle(HookEvent::BeforeAgentFinalize(event))
                .await
            {
                Ok(HookOutcome::BeforeAgentFinalize(FinalizeDecision::Proceed)) => {
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, "proceed".into()));
                    continue;
                }
                Ok(HookOutcome::BeforeAgentFinalize(decision)) => {
                    let said = match &decision {
                        FinalizeDecision::Revise(reason) => format!("revise: {reason}"),
                        _ => "finalize".into(),
                    };
                    run.decisions.push(Self::record(kind, &reg.plugin_id, said));
                    run.decided = Some((reg.plugin_id.clone(), decision));
                    return run;
                }
                other => HookError::unusable(kind, other),
            };
            if let Some(reason) = reg.failure(&error, &mut run.decisions) {
                run.blocked = Some(reason);
                return run;
            }
        }
        run
    }
}
