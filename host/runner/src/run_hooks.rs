//! The hooks around a run on the runner's side: `before_model_resolve`
//! (which may move the run to another model of the same generation),
//! `before_agent_start` (a gate), and `llm_input` / `llm_output` once per
//! attempt, fired without waiting.

use std::sync::Arc;

use clawhost_agent_core::{Message, RunContext, ToolExecutor, TurnOutcome};
use clawhost_hooks::{
    AgentStartEvent, HookEvent, HookKind, LlmInputEvent, LlmOutputEvent, ModelResolveEvent,
};
use clawhost_llm::ModelRuntimeGeneration;

use crate::{EmbeddedRunner, RunError, Session};

/// What one attempt is sent, for `llm_input`.
pub(crate) struct AttemptInput<'a> {
    pub(crate) attempt: u32,
    pub(crate) system: &'a Option<String>,
    pub(crate) prompt: &'a str,
}

impl EmbeddedRunner {
    /// Run `before_model_resolve`. An override names a provider and/or a
    /// model of the same generation's catalog; the generation (and the run's
    /// model ref) then carry it for this run. An override the catalog does
    /// not have is refused (the run keeps its model, the refusal is
    /// reported).
    pub(crate) async fn resolve_model(
        &self,
        session: &Session,
        generation: Arc<ModelRuntimeGeneration>,
        ctx: &mut RunContext,
        user_text: &str,
    ) -> Result<Arc<ModelRuntimeGeneration>, RunError> {
        if self
            .hooks()
            .handlers(HookKind::BeforeModelResolve)
            .next()
            .is_none()
        {
            return Ok(generation);
        }
        let (provider, model) = generation
            .model
            .split_once('/')
            .unwrap_or(("", generation.model.as_str()));
        let run = self
            .hooks()
            .before_model_resolve(ModelResolveEvent {
                session_id: Some(session.id.clone()),
                agent_id: session.agent_id.clone(),
                prompt: user_text.into(),
                provider: provider.into(),
                model: model.into(),
            })
            .await;
        clawhost_tools::report_hook_decisions(ctx, "", run.decisions);
        if let Some(reason) = run.blocked {
            return Err(RunError::HookBlocked(reason));
        }
        let Some((plugin, chosen)) = run.chosen else {
            return Ok(generation);
        };
        let model_ref = format!(
            "{}/{}",
            chosen.provider.as_deref().unwrap_or(provider),
            chosen.model.as_deref().unwrap_or(model)
        );
        if !generation.catalog.iter().any(|e| e.model_ref == model_ref) {
            tracing::warn!(plugin, %model_ref, "before_model_resolve override refused: not in the catalog");
            ctx.events
                .emit(clawhost_agent_core::TurnEvent::HookDecision {
                    hook: HookKind::BeforeModelResolve,
                    plugin,
                    call_id: String::new(),
                    decision: format!(
                    "override refused: `{model_ref}` is not in the model catalog; the run keeps {}",
                    generation.model
                ),
                });
            return Ok(generation);
        }
        ctx.model_ref = model_ref.clone();
        Ok(Arc::new(generation.with_model(model_ref)))
    }

    /// Run `before_agent_start`: a block stops the run before any model call.
    pub(crate) async fn gate_start(
        &self,
        session: &Session,
        ctx: &RunContext,
        user_text: &str,
    ) -> Result<(), RunError> {
        if self
            .hooks()
            .handlers(HookKind::BeforeAgentStart)
            .next()
            .is_none()
        {
            return Ok(());
        }
        let run = self
            .hooks()
            .before_agent_start(AgentStartEvent {
                run_id: ctx.run_id.clone(),
                session_id: Some(session.id.clone()),
                agent_id: session.agent_id.clone(),
                model_ref: ctx.model_ref.clone(),
                prompt: user_text.into(),
            })
            .await;
        clawhost_tools::report_hook_decisions(ctx, "", run.decisions);
        match run.blocked {
            Some(reason) => Err(RunError::HookBlocked(reason)),
            None => Ok(()),
        }
    }

    /// `llm_input` for an attempt about to run (not awaited).
    pub(crate) fn attempt_input(&self, session: &Session, ctx: &RunContext, a: AttemptInput<'_>) {
        if self.hooks().handlers(HookKind::LlmInput).next().is_none() {
            return;
        }
        self.hooks().observe_detached(
            LlmInputEvent {
                run_id: ctx.run_id.clone(),
                attempt: a.attempt,
                session_id: Some(session.id.clone()),
                agent_id: session.agent_id.clone(),
                model_ref: ctx.model_ref.clone(),
                system: a.system.clone(),
                prompt: a.prompt.into(),
                history: session.history.clone(),
                tools: self
                    .dispatcher()
                    .specs(ctx)
                    .into_iter()
                    .map(|s| s.name)
                    .collect(),
            },
            |e| HookEvent::LlmInput(e),
        );
    }

    /// `llm_output` for an attempt that answered (not awaited).
    pub(crate) fn attempt_output(
        &self,
        session: &Session,
        ctx: &RunContext,
        attempt: u32,
        outcome: &TurnOutcome,
    ) {
        if self.hooks().handlers(HookKind::LlmOutput).next().is_none() {
            return;
        }
        let mut texts = Vec::new();
        let mut tool_calls = 0;
        for m in &outcome.new_messages {
            if let Message::Assistant {
                text,
                tool_calls: calls,
                ..
            } = m
            {
                texts.push(text.clone());
                tool_calls += calls.len() as u32;
            }
        }
        self.hooks().observe_detached(
            LlmOutputEvent {
                run_id: ctx.run_id.clone(),
                attempt,
                session_id: Some(session.id.clone()),
                agent_id: session.agent_id.clone(),
                model_ref: ctx.model_ref.clone(),
                texts,
                tool_calls,
                usage: outcome.usage,
            },
            |e| HookEvent::LlmOutput(e),
        );
    }
}
