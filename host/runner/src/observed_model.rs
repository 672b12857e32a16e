//! A model client that reports every call to `model_call_started` and
//! `model_call_ended` (observe-only, metadata only: no prompt or reply
//! content). They never stop or change a call.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use clawhost_agent_core::{ModelClient, ModelError, ModelRequest, ModelResponse};
use clawhost_hooks::{HookEvent, HookKind, HookRunner, ModelCall, ModelCallEndedEvent};
use clawhost_llm::ModelRegistry;

/// Wraps a generation's registry with the model-call hooks of one run.
pub struct ObservedModel {
    registry: Arc<ModelRegistry>,
    hooks: Arc<HookRunner>,
    run_id: String,
    calls: AtomicU32,
}

impl ObservedModel {
    /// Wrap `registry` for the run `run_id`.
    pub fn new(registry: Arc<ModelRegistry>, hooks: Arc<HookRunner>, run_id: String) -> Self {
        Self {
            registry,
            hooks,
            run_id,
            calls: AtomicU32::new(0),
        }
    }

    fn call(&self, model_ref: &str) -> ModelCall {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let (provider, model) = model_ref.split_once('/').unwrap_or(("", model_ref));
        let api = self
            .registry
            .resolve(model_ref)
            .map(|(p, _)| p.config.api.name().to_string())
            .unwrap_or_default();
        ModelCall {
            run_id: self.run_id.clone(),
            call_id: format!("{}-m{n}", self.run_id),
            provider: provider.into(),
            model: model.into(),
            api,
        }
    }
}

#[async_trait]
impl ModelClient for ObservedModel {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        use tracing::Instrument;
        let span = tracing::info_span!("model_call", model = %request.model_ref);
        self.complete_traced(request).instrument(span).await
    }
}

impl ObservedModel {
    async fn complete_traced(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let watched = self
            .hooks
            .handlers(HookKind::ModelCallStarted)
            .next()
            .is_some()
            || self
                .hooks
                .handlers(HookKind::ModelCallEnded)
                .next()
                .is_some();
        if !watched {
            return self.registry.complete(request).await;
        }
        let call = self.call(&request.model_ref);
        self.hooks.observe(HookEvent::ModelCallStarted(&call)).await;
        let started = Instant::now();
        let reply = self.registry.complete(request).await;
        self.hooks
            .observe(HookEvent::ModelCallEnded(&ModelCallEndedEvent {
                call,
                duration_ms: started.elapsed().as_millis() as u64,
                outcome: reply.as_ref().map(|r| r.usage).map_err(|e| e.kind),
            }))
            .await;
        reply
    }
}
