//! What `mcp serve` records: one session per client connection, holding
//! each call and its result as a turn would (`clawhost sessions show`).

use clawhost_agent_core::{Message, ToolCallRequest, ToolOutput, ToolResultMessage};
use clawhost_sessions::{SessionStore, Transcript};

/// One connection's session, created at its first call.
pub(crate) struct Recorder {
    store: SessionStore,
    agent: String,
    transcript: tokio::sync::Mutex<Option<Transcript>>,
}

impl Recorder {
    pub(crate) fn new(store: SessionStore, agent: &str) -> Self {
        Self {
            store,
            agent: agent.to_string(),
            transcript: tokio::sync::Mutex::new(None),
        }
    }

    /// The session's id, creating it (with a first message naming the
    /// client) if this is the connection's first call.
    pub(crate) async fn session(&self, client: &str) -> Option<String> {
        let mut slot = self.transcript.lock().await;
        if slot.is_none() {
            match self.store.create(&self.agent, None) {
                Ok(mut t) => {
                    let note = Message::user(format!("[tool calls from MCP client {client}]"));
                    if let Err(e) = t.append_message(note) {
                        tracing::warn!(error = %e, "the MCP session could not be written");
                    }
                    *slot = Some(t);
                }
                Err(e) => tracing::warn!(error = %e, "no session for the MCP client's calls"),
            }
        }
        slot.as_ref().map(|t| t.id().to_string())
    }

    /// Store one call and its result.
    pub(crate) async fn call(&self, call: &ToolCallRequest, out: &ToolOutput) {
        let mut slot = self.transcript.lock().await;
        let Some(t) = slot.as_mut() else { return };
        let messages = [
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call.clone()],
                reasoning: Vec::new(),
            },
            Message::ToolResult(ToolResultMessage {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                content: out.content.clone(),
                is_error: out.is_error,
                images: out.images.clone(),
            }),
        ];
        let mut written = messages
            .into_iter()
            .try_for_each(|m| t.append_message(m).map(|_| ()));
        if written.is_ok() {
            written = self.store.commit(&self.agent, t);
        }
        if let Err(e) = written {
            tracing::warn!(error = %e, "an MCP call could not be recorded");
        }
    }
}
