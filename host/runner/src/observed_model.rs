//! A model client that reports every call to the `llm_input` and
//! `llm_output` hooks (observe-only). A handler with fail policy `block`
//! that fails stops the call (`llm_input`) or discards the reply (`llm_output`).

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{ModelClient, ModelError, ModelRequest, ModelResponse};
use clawhost_hooks::{HookEvent, HookRunner, LlmInputEvent, LlmOutputEvent};

/// Wraps a model client with the `llm_input` / `llm_output` hooks.
pub struct ObservedModel {
    inner: Arc<dyn ModelClient>,
    hooks: Arc<HookRunner>,
}

impl ObservedModel {
    /// Wrap `inner`.
    pub fn new(inner: Arc<dyn ModelClient>, hooks: Arc<HookRunner>) -> Self {
        Self { inner, hooks }
    }
}

#[async_trait]
impl ModelClient for ObservedModel {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let model_ref = request.model_ref.clone();
        self.hooks
            .observe(HookEvent::LlmInput(LlmInputEvent {
                model_ref: model_ref.clone(),
                system: request.system.clone(),
                message_count: request.messages.len() as u32,
                tool_count: request.tools.len() as u32,
            }))
            .await;
        let reply = self.inner.complete(request).await?;
        self.hooks
            .observe(HookEvent::LlmOutput(LlmOutputEvent {
                model_ref,
                text: reply.text.clone(),
                tool_call_count: reply.tool_calls.len() as u32,
                input_tokens: reply.usage.input_tokens,
                output_tokens: reply.usage.output_tokens,
            }))
            .await;
        Ok(reply)
    }
}
