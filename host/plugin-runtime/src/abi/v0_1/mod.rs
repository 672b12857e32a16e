//! API 0.1 (`wit/v0.1`, frozen): bindings, calls and conversions. Never
//! edited except to follow host-side type changes; plugins built against 0.1
//! keep loading through it.

mod hooks;
mod turn;

use std::sync::Arc;

use clawhost_agent_core::{HarnessError, TurnServices};
use clawhost_hooks::{HookError, HookEvent};
use wasmtime::component::{HasSelf, Instance, InstancePre, Linker};
use wasmtime::Store;

use super::outgoing::{self, Outgoing};
use super::{Answer, Declared, DeclaredTool, Reply, Request};
use crate::logs::{LogLevel, LogSource};
use crate::state::PluginState;

mod bindings {
    wasmtime::component::bindgen!({
        world: "host-view",
        path: "../../wit/v0.1",
        imports: {
            "openclaw:plugin/model": async,
            "openclaw:plugin/tools": async | trappable,
        },
        exports: { default: async },
        ownership: Borrowing { duplicate_if_necessary: true },
    });
}

use bindings::exports::openclaw::plugin::harness as harness_export;
use bindings::exports::openclaw::plugin::plugin as plugin_export;
use bindings::openclaw::plugin::host;
use bindings::openclaw::plugin::turn_types as wit_turn;
use bindings::openclaw::plugin::types as wit;

/// Define the 0.1 host interfaces in the linker.
pub(crate) fn add_to_linker(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    bindings::HostView::add_to_linker::<PluginState, HasSelf<PluginState>>(linker, |s| s)
}

/// Whether a 0.1 component exports a harness (by name; its types are
/// checked when it is linked).
pub(crate) fn exports_harness(component: &wasmtime::component::Component) -> bool {
    component
        .get_export_index(None, "openclaw:plugin/harness@0.1.0")
        .is_some()
}

/// Export lookups of a 0.1 component.
pub(crate) struct Indices {
    plugin: plugin_export::GuestIndices,
    harness: Option<harness_export::GuestIndices>,
}

impl Indices {
    pub(crate) fn new(pre: &InstancePre<PluginState>) -> wasmtime::Result<Self> {
        Ok(Self {
            plugin: plugin_export::GuestIndices::new(pre)?,
            // Exported with the wrong types is an error, not "no harness".
            harness: if exports_harness(pre.component()) {
                Some(harness_export::GuestIndices::new(pre)?)
            } else {
                None
            },
        })
    }

    pub(crate) fn load(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<Guest> {
        Ok(Guest {
            plugin: self.plugin.load(&mut *store, instance)?,
            harness: match &self.harness {
                Some(h) => Some(h.load(&mut *store, instance)?),
                None => None,
            },
        })
    }
}

/// The exports of one 0.1 instance.
pub(crate) struct Guest {
    plugin: plugin_export::Guest,
    harness: Option<harness_export::Guest>,
}

impl Guest {
    fn harness(&self) -> wasmtime::Result<&harness_export::Guest> {
        self.harness.as_ref().ok_or_else(|| {
            wasmtime::format_err!("the component does not export the harness interface")
        })
    }

    pub(crate) async fn call(
        &self,
        store: &mut Store<PluginState>,
        request: Request<'_>,
    ) -> wasmtime::Result<Reply> {
        Ok(match request {
            Request::Register => {
                let r = self.plugin.call_register(&mut *store).await?;
                Reply::new(
                    Answer::Declared(Declared {
                        id: Some(r.id),
                        tools: r
                            .tools
                            .into_iter()
                            .map(|t| DeclaredTool {
                                name: t.name,
                                description: t.description,
                                parameters: t.parameters,
                            })
                            .collect(),
                        hooks: r
                            .hooks
                            .into_iter()
                            .map(|h| (hooks::hook_kind(h.hook), h.priority))
                            .collect(),
                        tool_filters: Vec::new(),
                        harnesses: r.harnesses,
                    }),
                    0,
                )
            }
            Request::CallTool {
                tool,
                call_id,
                params,
                context,
            } => {
                let call = wit::ToolCall {
                    tool,
                    call_id,
                    params,
                    context: hooks::context(context),
                };
                let result = self.plugin.call_call_tool(&mut *store, call).await?;
                let size = match &result {
                    Ok(s) | Err(s) => s.len(),
                };
                // 0.1's tool error is a message: the tool failed.
                let result = result.map_err(clawhost_agent_core::ToolError::Failed);
                Reply::new(Answer::Tool(result), size)
            }
            Request::Hook(event, _) => {
                let kind = event.kind();
                // The one text 0.1 is handed that the host does not hold.
                let reply_text = match event {
                    HookEvent::LlmOutput(e) => e.text(),
                    _ => String::new(),
                };
                let Some(event) = hooks::event(event, &reply_text) else {
                    let error = format!("plugin API 0.1 has no `{}` hook", kind.name());
                    return Ok(Reply::new(Answer::Hook(Err(HookError::Failed(error))), 0));
                };
                let outcome = self.plugin.call_handle_hook(&mut *store, event).await?;
                let size = hooks::largest_text(&outcome);
                Reply::new(Answer::Hook(hooks::outcome(outcome, kind)), size)
            }
            // 0.1 has no approvals: there is no one to tell.
            Request::ApprovalResolved(_) => Reply::new(Answer::Done, 0),
            Request::Supports(route) => {
                let support = self
                    .harness()?
                    .call_supports(&mut *store, turn::route(&route))
                    .await?;
                Reply::new(Answer::Support(turn::support(support)), 0)
            }
            Request::RunAttempt(prepared, services) => {
                store.data_mut().services = Some(services.clone());
                let history = Outgoing::new(prepared.history.iter().map(|m| &**m));
                let requests = turn::requests(&history);
                let messages = turn::messages(&history, &requests);
                let schemas = outgoing::schema_texts(&prepared.tools);
                let tools = turn::tool_specs(&prepared.tools, &schemas);
                let answer = self
                    .harness()?
                    .call_run_attempt(&mut *store, turn::prepared(&prepared, &messages, &tools))
                    .await;
                store.data_mut().services = None;
                let answer = answer?;
                let size = match &answer {
                    Ok(s) | Err(s) => s.len(),
                };
                Reply::new(
                    Answer::Attempt(answer.map_err(|message| attempt_error(message, &services))),
                    size,
                )
            }
            Request::Reset(session) => {
                self.harness()?.call_reset(&mut *store, &session).await?;
                Reply::new(Answer::Done, 0)
            }
            Request::Dispose => {
                self.harness()?.call_dispose(&mut *store).await?;
                Reply::new(Answer::Done, 0)
            }
        })
    }
}

/// 0.1 reports a failed turn as text. When the turn's last model call
/// failed, the harness gave up on that error: it is passed on typed, as 0.2
/// does, so the host can still act on it (e.g. compact after an overflow).
fn attempt_error(message: String, services: &Arc<dyn TurnServices>) -> HarnessError {
    match services.last_model_error() {
        Some(e) => HarnessError::Model(e),
        None => HarnessError::Failed(message),
    }
}

impl host::Host for PluginState {
    fn log(&mut self, level: host::Level, message: String) {
        let level = match level {
            host::Level::Trace => LogLevel::Trace,
            host::Level::Debug => LogLevel::Debug,
            host::Level::Info => LogLevel::Info,
            host::Level::Warn => LogLevel::Warn,
            host::Level::Error => LogLevel::Error,
        };
        self.logs.push(LogSource::Log(level), message);
    }

    fn config(&mut self) -> String {
        self.config_json.to_string()
    }
}

impl wit::Host for PluginState {}
impl wit_turn::Host for PluginState {}

const NO_TURN: &str =
    "no turn is in progress: model and tool calls are only available inside run-attempt";

// The signature is the frozen 0.1 WIT's (`result<model-reply, string>`).
impl bindings::openclaw::plugin::model::Host for PluginState {
    async fn complete(
        &mut self,
        system: Option<String>,
        messages: Vec<wit_turn::MessageResult>,
        tools: Vec<wit_turn::ToolSpecResult>,
    ) -> Result<wit_turn::ModelReply, String> {
        let services = self.services.clone().ok_or_else(|| NO_TURN.to_string())?;
        let messages = messages.into_iter().map(turn::from_message).collect();
        let tools = tools.into_iter().map(turn::from_tool_spec).collect();
        services
            .complete(system, messages, tools, None)
            .await
            .map(|r| turn::model_reply(&r))
            .map_err(|e| e.to_string())
    }
}

impl bindings::openclaw::plugin::tools::Host for PluginState {
    async fn available(&mut self) -> wasmtime::Result<Vec<wit_turn::ToolSpecResult>> {
        Ok(self
            .services
            .as_ref()
            .map(|s| s.tools().iter().map(turn::tool_spec).collect())
            .unwrap_or_default())
    }

    /// A harness calling on after its budget was spent is stopped here:
    /// the error traps its `run-attempt`.
    async fn call(
        &mut self,
        request: wit_turn::ToolRequestResult,
    ) -> wasmtime::Result<wit_turn::ToolOutput> {
        Ok(match self.services.clone() {
            Some(services) => {
                turn::tool_output(&services.call_tool(turn::from_tool_request(request)).await?)
            }
            None => wit_turn::ToolOutput {
                content: NO_TURN.into(),
                is_error: true,
            },
        })
    }
}
