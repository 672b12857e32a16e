//! API 0.2.2 `native-runtime` (and 0.2.3 `native-turn`): what a
//! harness bridging a native agent runtime (the Codex app-server, an ACP
//! agent) is given. A `process` is one
//! the operator granted by name, started without a shell and stopped with its
//! process group when the turn that opened it ends; everything else reports
//! the runtime's turn to the host's mirror of it ([`TurnServices`]).

use std::time::Duration;

use clawhost_agent_core::{ToolCallRequest, ToolResultMessage};
use clawhost_process_channel::{ChannelError, Limits, ProcessChannel};
use wasmtime::component::Resource;

use super::bindings::openclaw::plugin::native_runtime as nr;
use super::bindings::openclaw::plugin::native_turn as nt;
use super::turn::TurnHandle;
use super::{convert, wit};
use crate::state::PluginState;

/// Most processes one `run-attempt` may open: a bridge needs one; a plugin
/// opening more in a loop is stopped long before it can exhaust the host.
pub(crate) const MAX_PROCESSES_PER_TURN: usize = 4;

/// How long an aborted turn waits for its harness to stop the native
/// runtime's own turn before the process group is killed.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// How `recv` starts the error that tells a harness its turn was aborted
/// (`exited("turn aborted: …")`, once; the process still runs for the
/// grace, so the harness can send `turn/interrupt` or `session/cancel`).
const TURN_ABORTED: &str = "turn aborted";

/// The host side of a `process`: the channel, until its turn ends.
pub struct ProcessHandle {
    name: String,
    channel: Option<ProcessChannel>,
    /// Cancelled when the turn is aborted.
    stop: tokio_util::sync::CancellationToken,
    /// Whether `recv` has said so.
    stop_told: bool,
}

impl ProcessHandle {
    fn channel(&mut self) -> Result<&mut ProcessChannel, nr::ProcessError> {
        let name = &self.name;
        self.channel.as_mut().ok_or_else(|| {
            nr::ProcessError::Exited(format!(
                "process `{name}` was stopped when the turn that opened it ended"
            ))
        })
    }
}

fn process_error(error: ChannelError) -> nr::ProcessError {
    let text = error.to_string();
    match error {
        ChannelError::Spawn { .. } => nr::ProcessError::Spawn(text),
        ChannelError::LineTooLong { .. }
        | ChannelError::Flood { .. }
        | ChannelError::NotUtf8 { .. } => nr::ProcessError::BadOutput(text),
        ChannelError::Exited { .. } => nr::ProcessError::Exited(text),
        ChannelError::LineBreak { .. } | ChannelError::Io { .. } => nr::ProcessError::Io(text),
    }
}

impl PluginState {
    /// Stop the processes opened during the `run-attempt` that just ended
    /// (the guest may still hold their handles; they answer `exited`).
    pub(crate) fn end_turn_processes(&mut self) {
        for rep in std::mem::take(&mut self.turn_processes) {
            let handle = Resource::<ProcessHandle>::new_own(rep);
            if let Ok(process) = self.table.get_mut(&handle) {
                // Dropping the channel kills its process group.
                process.channel = None;
            }
        }
    }
}

impl nr::Host for PluginState {
    async fn open_process(
        &mut self,
        turn: Resource<TurnHandle>,
        name: String,
    ) -> wasmtime::Result<Result<Resource<ProcessHandle>, nr::ProcessError>> {
        if self.turn_processes.len() >= MAX_PROCESSES_PER_TURN {
            return Ok(Err(nr::ProcessError::Spawn(format!(
                "a turn may open at most {MAX_PROCESSES_PER_TURN} processes"
            ))));
        }
        // Only inside a turn (the borrow proves it is live).
        self.table.get(&turn)?;
        let Some(spec) = self.processes.get(&name) else {
            return Ok(Err(nr::ProcessError::NotGranted(format!(
                "no process `{name}` is granted to this plugin (plugins.entries.<id>.grants.processes and the manifest's capabilities.processes)"
            ))));
        };
        let channel = match ProcessChannel::spawn(spec, Limits::default()) {
            Ok(channel) => channel,
            Err(e) => return Ok(Err(process_error(e))),
        };
        tracing::info!(process = %name, pid = ?channel.pid(), "started a granted process");
        let stop = self.services(&turn)?.stop_signal(STOP_GRACE);
        let handle = self.table.push(ProcessHandle {
            name,
            channel: Some(channel),
            stop,
            stop_told: false,
        })?;
        self.turn_processes.push(handle.rep());
        Ok(Ok(handle))
    }

    async fn gate_tool(
        &mut self,
        turn: Resource<TurnHandle>,
        request: wit::ToolRequestResult,
    ) -> wasmtime::Result<nr::Verdict> {
        let services = self.services(&turn)?;
        let call: ToolCallRequest = convert::from_tool_request(request);
        Ok(match services.gate_native(call).await {
            Ok(params) => nr::Verdict::Allow(params.to_string()),
            Err(refused) => nr::Verdict::Deny(refused.0),
        })
    }

    async fn stream_text(
        &mut self,
        turn: Resource<TurnHandle>,
        delta: String,
    ) -> wasmtime::Result<()> {
        self.services(&turn)?.stream_text(&delta);
        Ok(())
    }

    async fn record_reply(
        &mut self,
        turn: Resource<TurnHandle>,
        text: String,
        tool_calls: Vec<wit::ToolRequestResult>,
    ) -> wasmtime::Result<()> {
        let calls = tool_calls
            .into_iter()
            .map(convert::from_tool_request)
            .collect();
        self.services(&turn)?.record_reply(text, calls);
        Ok(())
    }

    async fn record_tool_result(
        &mut self,
        turn: Resource<TurnHandle>,
        call_id: String,
        tool: String,
        content: String,
        is_error: bool,
    ) -> wasmtime::Result<()> {
        self.services(&turn)?.record_tool_result(ToolResultMessage {
            call_id,
            tool,
            content,
            is_error,
            images: Vec::new(),
        });
        Ok(())
    }

    async fn thread_id(&mut self, turn: Resource<TurnHandle>) -> wasmtime::Result<Option<String>> {
        Ok(self.services(&turn)?.native_thread())
    }

    async fn set_thread(
        &mut self,
        turn: Resource<TurnHandle>,
        id: String,
        agent: String,
    ) -> wasmtime::Result<()> {
        self.services(&turn)?.set_native_thread(id, agent);
        Ok(())
    }
}

impl nt::Host for PluginState {
    async fn compaction(
        &mut self,
        turn: Resource<TurnHandle>,
        phase: nt::CompactionPhase,
    ) -> wasmtime::Result<()> {
        let phase = match phase {
            nt::CompactionPhase::Started => clawhost_agent_core::NativeCompaction::Started,
            nt::CompactionPhase::Completed => clawhost_agent_core::NativeCompaction::Completed,
        };
        self.services(&turn)?.native_compaction(phase).await;
        Ok(())
    }

    async fn tool_endpoint(
        &mut self,
        turn: Resource<TurnHandle>,
    ) -> wasmtime::Result<Result<nt::McpEndpoint, String>> {
        Ok(self
            .services(&turn)?
            .tool_endpoint()
            .map(|e| nt::McpEndpoint {
                url: e.url,
                token: e.token,
            }))
    }
}

impl nr::HostProcess for PluginState {
    async fn send(
        &mut self,
        process: Resource<ProcessHandle>,
        line: String,
    ) -> wasmtime::Result<Result<(), nr::ProcessError>> {
        let handle = self.table.get_mut(&process)?;
        let channel = match handle.channel() {
            Ok(channel) => channel,
            Err(e) => return Ok(Err(e)),
        };
        Ok(channel.send(&line).await.map_err(process_error))
    }

    async fn recv(
        &mut self,
        process: Resource<ProcessHandle>,
        timeout_ms: u32,
    ) -> wasmtime::Result<Result<String, nr::ProcessError>> {
        let handle = self.table.get_mut(&process)?;
        let stop = handle.stop.clone();
        let tell_stop = !handle.stop_told;
        let channel = match handle.channel() {
            Ok(channel) => channel,
            Err(e) => return Ok(Err(e)),
        };
        let wait = Duration::from_millis(u64::from(timeout_ms));
        let received = tokio::select! {
            biased;
            () = stop.cancelled(), if tell_stop => None,
            received = tokio::time::timeout(wait, channel.recv()) => Some(received),
        };
        let Some(received) = received else {
            handle.stop_told = true;
            return Ok(Err(nr::ProcessError::Exited(format!(
                "{TURN_ABORTED}: stop the runtime's turn now; the process is stopped in {} s",
                STOP_GRACE.as_secs()
            ))));
        };
        Ok(match received {
            Ok(line) => line.map_err(|e| {
                let error = process_error(e);
                // A process that wrote something unusable is stopped.
                if matches!(error, nr::ProcessError::BadOutput(_)) {
                    handle.channel = None;
                }
                error
            }),
            Err(_) => Err(nr::ProcessError::Timeout),
        })
    }

    async fn drop(&mut self, process: Resource<ProcessHandle>) -> wasmtime::Result<()> {
        self.turn_processes.retain(|rep| *rep != process.rep());
        // Dropping the channel kills its process group.
        self.table.delete(process)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use wasmtime::component::Resource;
    use wasmtime_wasi::WasiCtxBuilder;

    use super::{nr, MAX_PROCESSES_PER_TURN};
    use crate::logs::PluginLogs;
    use crate::state::{MemoryCap, PluginState};

    #[tokio::test]
    async fn a_turn_cannot_open_processes_without_end() {
        let mut state = PluginState::new(
            WasiCtxBuilder::new().build(),
            MemoryCap::new(16 << 20),
            64,
            PluginLogs::new("p", 1 << 10),
            Arc::from("null"),
        );
        // As if this turn had opened its share already.
        state.turn_processes = (0..MAX_PROCESSES_PER_TURN as u32).collect();
        let turn = Resource::new_borrow(0);
        let refused = nr::Host::open_process(&mut state, turn, "agent".into())
            .await
            .unwrap();
        assert!(
            matches!(&refused, Err(nr::ProcessError::Spawn(m)) if m.contains("at most 4")),
            "{refused:?}"
        );
    }
}
