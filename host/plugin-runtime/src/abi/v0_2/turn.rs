//! The `turn` and `reply-stream` resources a 0.2 harness drives its turn
//! through. A `turn` lives in the instance's handle table only while
//! `run-attempt` runs; a `reply-stream` ends with its model call, and
//! dropping it stops that call.

use std::sync::Arc;

use clawhost_agent_core::{ModelError, ModelErrorKind, ModelResponse, TextSink, TurnServices};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use wasmtime::component::Resource;

use super::bindings::openclaw::plugin::agent_turn as at;
use super::convert;
use super::wit;
use crate::state::PluginState;

/// The host side of a `turn`: the services of the turn in progress.
pub struct TurnHandle {
    services: Arc<dyn TurnServices>,
}

impl TurnHandle {
    pub(crate) fn new(services: Arc<dyn TurnServices>) -> Self {
        Self { services }
    }
}

/// The host side of a `reply-stream`: reply text as it arrives, and the
/// model call producing it.
pub struct ReplyStream {
    deltas: mpsc::UnboundedReceiver<String>,
    call: Option<JoinHandle<Result<ModelResponse, ModelError>>>,
}

impl Drop for ReplyStream {
    fn drop(&mut self) {
        if let Some(call) = &self.call {
            call.abort();
        }
    }
}

impl PluginState {
    pub(super) fn services(
        &self,
        turn: &Resource<TurnHandle>,
    ) -> wasmtime::Result<Arc<dyn TurnServices>> {
        Ok(self.table.get(turn)?.services.clone())
    }
}

impl at::HostTurn for PluginState {
    async fn tools(
        &mut self,
        turn: Resource<TurnHandle>,
    ) -> wasmtime::Result<Vec<wit::ToolSpecResult>> {
        Ok(self
            .services(&turn)?
            .tools()
            .iter()
            .map(convert::tool_spec)
            .collect())
    }

    async fn complete(
        &mut self,
        turn: Resource<TurnHandle>,
        request: at::ModelRequest,
    ) -> wasmtime::Result<Result<wit::ModelReply, wit::ModelError>> {
        let services = self.services(&turn)?;
        let (system, messages, tools) = convert::model_request(request);
        Ok(services
            .complete(system, messages, tools, None)
            .await
            .map(|r| convert::model_reply(&r))
            .map_err(convert::model_error))
    }

    async fn complete_streaming(
        &mut self,
        turn: Resource<TurnHandle>,
        request: at::ModelRequest,
    ) -> wasmtime::Result<Resource<ReplyStream>> {
        let services = self.services(&turn)?;
        let (system, messages, tools) = convert::model_request(request);
        let (tx, deltas) = mpsc::unbounded_channel();
        let sink = TextSink::new(move |text| {
            // The guest may have dropped the stream; the call goes on to its end.
            let _ = tx.send(text.to_string());
        });
        let call =
            tokio::spawn(
                async move { services.complete(system, messages, tools, Some(sink)).await },
            );
        Ok(self.table.push(ReplyStream {
            deltas,
            call: Some(call),
        })?)
    }

    async fn call_tool(
        &mut self,
        turn: Resource<TurnHandle>,
        request: wit::ToolRequestResult,
    ) -> wasmtime::Result<at::ToolOutput> {
        let services = self.services(&turn)?;
        // A harness calling on after its budget was spent is stopped here:
        // the error traps its `run-attempt`.
        let output = services
            .call_tool(convert::from_tool_request(request))
            .await?;
        Ok(convert::tool_output(&output))
    }

    async fn drop(&mut self, turn: Resource<TurnHandle>) -> wasmtime::Result<()> {
        // Only the host owns a turn; the guest's handle is a borrow.
        if turn.owned() {
            self.table.delete(turn)?;
        }
        Ok(())
    }
}

impl at::HostReplyStream for PluginState {
    async fn next(&mut self, stream: Resource<ReplyStream>) -> wasmtime::Result<Option<String>> {
        Ok(self.table.get_mut(&stream)?.deltas.recv().await)
    }

    async fn finish(
        &mut self,
        stream: Resource<ReplyStream>,
    ) -> wasmtime::Result<Result<wit::ModelReply, wit::ModelError>> {
        let Some(call) = self.table.get_mut(&stream)?.call.take() else {
            return Ok(Err(wit::ModelError::Other(
                "finish was already called on this stream".into(),
            )));
        };
        let result = match call.await {
            Ok(result) => result,
            Err(e) => Err(ModelError::new(
                ModelErrorKind::Other,
                format!("the model call stopped: {e}"),
            )),
        };
        Ok(result
            .map(|r| convert::model_reply(&r))
            .map_err(convert::model_error))
    }

    async fn drop(&mut self, stream: Resource<ReplyStream>) -> wasmtime::Result<()> {
        self.table.delete(stream)?;
        Ok(())
    }
}
