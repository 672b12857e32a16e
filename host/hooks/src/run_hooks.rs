//! Running the hooks around a run: `before_model_resolve`,
//! `before_agent_start`, the compaction-provider seam, and observe-only
//! hooks fired without waiting (`llm_input`, `llm_output`).

use std::sync::Arc;

use crate::catalog::*;
use crate::runner::{CompactionHookResult, HookDecisionRecord, HookError, HookRunner};

/// Result of `before_model_resolve`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResolveRun {
    /// `(plugin id, override)` of the highest-priority handler that overrode.
    pub chosen: Option<(String, ModelOverride)>,
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
    /// Set when a handler with fail policy `block` failed: do not run.
    pub blocked: Option<String>,
}

/// Result of `before_agent_start`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentStartRun {
    /// Why the run must not start, if a handler blocked it (or failed with
    /// fail policy `block`).
    pub blocked: Option<String>,
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
}

impl HookRunner {
    /// Run `before_model_resolve`: handlers by descending priority; the first
    /// override wins (lower-priority handlers are not asked). A failing
    /// handler is skipped unless its fail policy is `block`.
    pub async fn before_model_resolve(&self, event: ModelResolveEvent) -> ModelResolveRun {
        let kind = HookKind::BeforeModelResolve;
        let mut run = ModelResolveRun::default();
        for reg in self.handlers(kind) {
            let error = match reg
                .handler
                .handle(HookEvent::BeforeModelResolve(&event))
                .await
            {
                Ok(HookOutcome::BeforeModelResolve(None)) => {
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, "keep".into()));
                    continue;
                }
                Ok(HookOutcome::BeforeModelResolve(Some(o))) => {
                    let decision = format!(
                        "override: provider {} model {}",
                        o.provider.as_deref().unwrap_or("(kept)"),
                        o.model.as_deref().unwrap_or("(kept)")
                    );
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, decision));
                    run.chosen = Some((reg.plugin_id.clone(), o));
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

    /// Run `before_agent_start`: handlers by descending priority; a block is
    /// terminal. A failing handler is skipped unless its fail policy is `block`.
    pub async fn before_agent_start(&self, event: AgentStartEvent) -> AgentStartRun {
        let kind = HookKind::BeforeAgentStart;
        let mut run = AgentStartRun::default();
        for reg in self.handlers(kind) {
            let error = match reg
                .handler
                .handle(HookEvent::BeforeAgentStart(&event))
                .await
            {
                Ok(HookOutcome::BeforeAgentStart(Ok(()))) => {
                    run.decisions
                        .push(Self::record(kind, &reg.plugin_id, "allow".into()));
                    continue;
                }
                Ok(HookOutcome::BeforeAgentStart(Err(Blocked(reason)))) => {
                    run.decisions.push(Self::record(
                        kind,
                        &reg.plugin_id,
                        format!("block: {reason}"),
                    ));
                    run.blocked = Some(format!(
                        "plugin `{}` stopped the run: {reason}",
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

    /// Ask the compaction providers (granted plugins) by descending priority;
    /// the first summary wins. A failing provider is skipped unless its fail
    /// policy is `block`, which stops the compaction.
    pub async fn compaction_summary(&self, event: BeforeCompactionEvent) -> CompactionHookResult {
        let kind = HookKind::CompactionProvider;
        let mut result = CompactionHookResult::default();
        for reg in self.handlers(kind) {
            let error = match reg
                .handler
                .handle(HookEvent::CompactionProvider(&event))
                .await
            {
                Ok(HookOutcome::CompactionProvider(Some(summary)))
                    if !summary.trim().is_empty() =>
                {
                    let record = Self::record(kind, &reg.plugin_id, "summary".into());
                    result.decisions.push(record);
                    result.summary = Some((reg.plugin_id.clone(), summary));
                    return result;
                }
                Ok(HookOutcome::CompactionProvider(_)) => {
                    let record = Self::record(kind, &reg.plugin_id, "none".into());
                    result.decisions.push(record);
                    continue;
                }
                other => HookError::unusable(kind, other),
            };
            if let Some(reason) = reg.failure(&error, &mut result.decisions) {
                result.blocked = Some(reason);
                return result;
            }
        }
        result
    }

    /// Fire an observe-only hook without waiting for it: the handlers run
    /// on a task of their own, under their deadlines; what they decide is
    /// only logged. Used for the hooks OpenClaw runs fire-and-forget
    /// (`llm_input`, `llm_output`), so a slow observer never delays a run.
    /// `wrap` borrows it as a [`HookEvent`], e.g. `|e| HookEvent::LlmInput(e)`.
    pub fn observe_detached<E: Send + Sync + 'static>(
        self: &Arc<Self>,
        event: E,
        wrap: for<'a> fn(&'a E) -> HookEvent<'a>,
    ) {
        if self.handlers(wrap(&event).kind()).next().is_none() {
            return;
        }
        let runner = self.clone();
        let mut detached = clawhost_agent_core::lock(&self.detached);
        // Forget the ones that finished.
        while detached.try_join_next().is_some() {}
        detached.spawn(async move {
            let observed = runner.observe(wrap(&event)).await;
            for d in observed.decisions {
                tracing::debug!(hook = d.hook.name(), plugin = %d.plugin_id, decision = %d.decision, "detached hook");
            }
        });
    }

    /// Wait for the hooks fired without waiting to finish (each is bounded
    /// by its deadline), so none is lost when a session or the process ends.
    pub async fn settle(&self) {
        let mut pending = std::mem::take(&mut *clawhost_agent_core::lock(&self.detached));
        while pending.join_next().await.is_some() {}
    }
}
