//! The turn hooks, fired alike whatever runtime runs the turn (the built-in
//! loop, a plugin harness, Codex, an ACP agent): `agent_turn_prepare` adds
//! context to the turn's message, `before_agent_run` may stop
//! the turn, `before_agent_reply` may answer in the runtime's place, and
//! `before_agent_finalize` may send the runtime back for another pass (its
//! reason is the turn's next message; at most [`MAX_REVISIONS`] a turn).

use clawhost_agent_core::{
    Message, RunContext, StopReason, TurnEvent, TurnOutcome, Usage, UserInput,
};
use clawhost_hooks::{AgentFinalizeEvent, AgentRunEvent, FinalizeDecision, HookKind};

use crate::{EmbeddedRunner, RunError};

/// Most extra passes `before_agent_finalize` may ask for in one turn.
pub const MAX_REVISIONS: u32 = 3;

impl EmbeddedRunner {
    /// `agent_turn_prepare`: the user's message with the context handlers
    /// add around it (before `before_prompt_build`, on any runtime).
    pub(crate) async fn prepare_turn(
        &self,
        ctx: &RunContext,
        event: &AgentRunEvent,
    ) -> Result<String, RunError> {
        if self
            .hooks()
            .handlers(HookKind::AgentTurnPrepare)
            .next()
            .is_none()
        {
            return Ok(event.prompt.clone());
        }
        let prepared = self.hooks().agent_turn_prepare(event).await;
        clawhost_tools::report_hook_decisions(ctx, "", prepared.decisions);
        match prepared.blocked {
            Some(reason) => Err(RunError::HookBlocked(reason)),
            None => Ok(prepared.prompt),
        }
    }

    /// `before_agent_run`: a block (or a failing handler, by default) stops
    /// the turn before its runtime runs.
    pub(crate) async fn gate_run(
        &self,
        ctx: &RunContext,
        event: &AgentRunEvent,
    ) -> Result<(), RunError> {
        if self
            .hooks()
            .handlers(HookKind::BeforeAgentRun)
            .next()
            .is_none()
        {
            return Ok(());
        }
        let run = self.hooks().before_agent_run(event).await;
        clawhost_tools::report_hook_decisions(ctx, "", run.decisions);
        match run.blocked {
            Some(reason) => Err(RunError::HookBlocked(reason)),
            None => Ok(()),
        }
    }

    /// `before_agent_reply`: the turn a plugin answered in the runtime's
    /// place (the user's message and the reply), if one did.
    pub(crate) async fn claimed_reply(
        &self,
        ctx: &RunContext,
        event: &AgentRunEvent,
        user: &UserInput,
    ) -> Result<Option<TurnOutcome>, RunError> {
        if self
            .hooks()
            .handlers(HookKind::BeforeAgentReply)
            .next()
            .is_none()
        {
            return Ok(None);
        }
        let run = self.hooks().before_agent_reply(event).await;
        clawhost_tools::report_hook_decisions(ctx, "", run.decisions);
        if let Some(reason) = run.blocked {
            return Err(RunError::HookBlocked(reason));
        }
        let Some((_, reply)) = run.decided else {
            return Ok(None);
        };
        ctx.events.emit(TurnEvent::UserMessage {
            text: user.text.clone(),
            images: user.images.clone(),
        });
        ctx.events.emit(TurnEvent::FinalAnswer {
            text: reply.clone(),
            stop_reason: StopReason::EndTurn,
        });
        Ok(Some(TurnOutcome {
            new_messages: vec![
                user.message_with_text(&event.prompt),
                Message::assistant(reply.clone()),
            ],
            answer: reply,
            iterations: 0,
            usage: Usage::default(),
            stop_reason: StopReason::EndTurn,
        }))
    }

    /// `before_agent_finalize` on the runtime's answer: the reason for
    /// another pass, if a handler asked for one and the turn has passes left.
    pub(crate) async fn revision(
        &self,
        ctx: &RunContext,
        event: &AgentRunEvent,
        answer: &str,
        revisions: u32,
    ) -> Result<Option<String>, RunError> {
        if self
            .hooks()
            .handlers(HookKind::BeforeAgentFinalize)
            .next()
            .is_none()
        {
            return Ok(None);
        }
        let run = self
            .hooks()
            .before_agent_finalize(&AgentFinalizeEvent {
                run: event.clone(),
                answer: answer.into(),
                revisions,
            })
            .await;
        clawhost_tools::report_hook_decisions(ctx, "", run.decisions);
        if let Some(reason) = run.blocked {
            return Err(RunError::HookBlocked(reason));
        }
        match run.decided {
            Some((plugin, FinalizeDecision::Revise(reason))) if revisions >= MAX_REVISIONS => {
                tracing::info!(%plugin, %reason, "before_agent_finalize asked for a pass past the turn's bound; the answer stands");
                Ok(None)
            }
            Some((_, FinalizeDecision::Revise(reason))) => Ok(Some(reason)),
            _ => Ok(None),
        }
    }
}
