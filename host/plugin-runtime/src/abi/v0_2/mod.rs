//! API 0.2 (`wit/v0.2`): bindings, calls and conversions. One export per
//! hook family, each optional: the host calls a family only when the
//! component exports it.

mod convert;
mod deliver;
mod hooks;
mod native;
mod prepare_hooks;
mod turn;
mod turn_hooks;

use clawhost_hooks::HookKind;
use wasmtime::component::{HasSelf, Instance, InstancePre, Linker, Resource};
use wasmtime::Store;

use super::outgoing::{self, Outgoing};
use super::{Answer, Declared, DeclaredTool, Reply, Request};
use crate::state::PluginState;
use crate::CURRENT_API;
pub use native::ProcessHandle;
pub use turn::{ReplyStream, TurnHandle};

mod bindings {
    wasmtime::component::bindgen!({
        world: "host-view",
        path: "../../wit/v0.2",
        imports: {
            "openclaw:plugin/agent-turn": async | trappable,
            "openclaw:plugin/native-runtime": async | trappable,
            "openclaw:plugin/native-turn": async | trappable,
        },
        exports: { default: async },
        ownership: Borrowing { duplicate_if_necessary: true },
        with: {
            "openclaw:plugin/agent-turn.turn": super::TurnHandle,
            "openclaw:plugin/agent-turn.reply-stream": super::ReplyStream,
            "openclaw:plugin/native-runtime.process": super::ProcessHandle,
        },
    });
}

use bindings::exports::openclaw::plugin as ex;
use bindings::openclaw::plugin::{agent_turn, host, types as wit};

/// Define the 0.2 host interfaces in the linker.
pub(crate) fn add_to_linker(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    bindings::HostView::add_to_linker::<PluginState, HasSelf<PluginState>>(linker, |s| s)
}

/// Export lookups of a 0.2 component; `None` for what it does not export.
pub(crate) struct Indices {
    tool_provider: Option<ex::tool_provider::GuestIndices>,
    tool_hooks: Option<ex::tool_hooks::GuestIndices>,
    prompt_hooks: Option<ex::prompt_hooks::GuestIndices>,
    model_hooks: Option<ex::model_hooks::GuestIndices>,
    session_hooks: Option<ex::session_hooks::GuestIndices>,
    transcript_hooks: Option<ex::transcript_hooks::GuestIndices>,
    tool_gate: Option<ex::tool_gate::GuestIndices>,
    persist_hooks: Option<ex::persist_hooks::GuestIndices>,
    run_hooks: Option<ex::run_hooks::GuestIndices>,
    compaction_provider: Option<ex::compaction_provider::GuestIndices>,
    turn_hooks: Option<ex::turn_hooks::GuestIndices>,
    prepare_hooks: Option<ex::prepare_hooks::GuestIndices>,
    harness: Option<ex::harness::GuestIndices>,
}

/// The exports of one 0.2 instance.
pub(crate) struct Guest {
    tool_provider: Option<ex::tool_provider::Guest>,
    tool_hooks: Option<ex::tool_hooks::Guest>,
    prompt_hooks: Option<ex::prompt_hooks::Guest>,
    model_hooks: Option<ex::model_hooks::Guest>,
    session_hooks: Option<ex::session_hooks::Guest>,
    transcript_hooks: Option<ex::transcript_hooks::Guest>,
    tool_gate: Option<ex::tool_gate::Guest>,
    persist_hooks: Option<ex::persist_hooks::Guest>,
    run_hooks: Option<ex::run_hooks::Guest>,
    compaction_provider: Option<ex::compaction_provider::Guest>,
    turn_hooks: Option<ex::turn_hooks::Guest>,
    prepare_hooks: Option<ex::prepare_hooks::Guest>,
    harness: Option<ex::harness::Guest>,
}

/// Apply `$m` to every export: its field (and module) name and its WIT name.
macro_rules! each_export {
    ($m:ident) => {
        $m!(
            tool_provider "tool-provider",
            tool_hooks "tool-hooks",
            prompt_hooks "prompt-hooks",
            model_hooks "model-hooks",
            session_hooks "session-hooks",
            transcript_hooks "transcript-hooks",
            tool_gate "tool-gate",
            persist_hooks "persist-hooks",
            run_hooks "run-hooks",
            compaction_provider "compaction-provider",
            turn_hooks "turn-hooks",
            prepare_hooks "prepare-hooks",
            harness "harness"
        )
    };
}

/// Whether a 0.2 component exports `openclaw:plugin/<iface>` (by name; its
/// types are checked when it is linked). Lookups are semver-compatible: an
/// earlier 0.2 component's exports answer the current (`@0.2.3`) names.
fn exports(component: &wasmtime::component::Component, iface: &str) -> bool {
    component
        .get_export_index(None, format!("openclaw:plugin/{iface}@{CURRENT_API}"))
        .is_some()
}

/// Whether a 0.2 component exports a harness.
pub(crate) fn exports_harness(component: &wasmtime::component::Component) -> bool {
    exports(component, "harness")
}

impl Indices {
    pub(crate) fn new(pre: &InstancePre<PluginState>) -> wasmtime::Result<Self> {
        // An interface the component does not export is `None`; one it exports
        // with the wrong types is an error, never silently skipped (a policy
        // hook that does not run must not look like one that was not there).
        let exported = |iface: &str| exports(pre.component(), iface);
        macro_rules! lookup {
            ($($f:ident $name:literal),*) => {
                Self { $($f: match exported($name) {
                    true => Some(ex::$f::GuestIndices::new(pre).map_err(|e| {
                        e.context(concat!("its `openclaw:plugin/", $name, "` export does not match API 0.2"))
                    })?),
                    false => None,
                },)* }
            };
        }
        let indices = each_export!(lookup);
        if !indices.exports_any() {
            wasmtime::bail!("the component exports no interface of openclaw:plugin@0.2");
        }
        Ok(indices)
    }

    fn exports_any(&self) -> bool {
        macro_rules! any {
            ($($f:ident $name:literal),*) => { false $(|| self.$f.is_some())* };
        }
        each_export!(any)
    }

    pub(crate) fn load(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<Guest> {
        macro_rules! load {
            ($($f:ident $name:literal),*) => {
                Guest { $($f: match &self.$f {
                    Some(i) => Some(i.load(&mut *store, instance)?),
                    None => None,
                },)* }
            };
        }
        Ok(each_export!(load))
    }
}

fn missing(interface: &str) -> wasmtime::Error {
    wasmtime::format_err!("the component does not export `openclaw:plugin/{interface}@0.2`")
}

impl Guest {
    pub(crate) async fn call(
        &self,
        store: &mut Store<PluginState>,
        request: Request<'_>,
    ) -> wasmtime::Result<Reply> {
        Ok(match request {
            Request::Register => Reply::new(Answer::Declared(self.declare(store).await?), 0),
            Request::CallTool {
                tool,
                call_id,
                params,
                context,
            } => {
                let provider = self
                    .tool_provider
                    .as_ref()
                    .ok_or_else(|| missing("tool-provider"))?;
                let call = ex::tool_provider::ToolCall {
                    tool,
                    call_id,
                    params,
                    context: convert::context(context),
                };
                let result = provider.call_call(&mut *store, call).await?;
                let size = match &result {
                    Ok(s) => s.len(),
                    Err(wit::ToolError::InvalidParams(m) | wit::ToolError::Failed(m)) => m.len(),
                };
                let result = result.map_err(convert::tool_error);
                Reply::new(Answer::Tool(result), size)
            }
            Request::Hook(event, _) => self.hook(store, event).await?,
            Request::ApprovalResolved(event) => self.approval_resolved(store, event).await?,
            Request::Supports(route) => {
                let harness = self.harness.as_ref().ok_or_else(|| missing("harness"))?;
                let support = match convert::route(&route) {
                    Some(r) => convert::support(harness.call_supports(&mut *store, r).await?),
                    // A wire API newer than 0.2 is one a 0.2 harness cannot speak.
                    None => clawhost_agent_core::Support::Unsupported(format!(
                        "wire API `{}` is newer than plugin API 0.2",
                        route.api.name()
                    )),
                };
                Reply::new(Answer::Support(support), 0)
            }
            Request::RunAttempt(prepared, services) => {
                let harness = self.harness.as_ref().ok_or_else(|| missing("harness"))?;
                let own = store.data_mut().table.push(TurnHandle::new(services))?;
                let borrowed = Resource::<TurnHandle>::new_borrow(own.rep());
                let history = Outgoing::new(prepared.history.iter().map(|m| &**m));
                let requests = convert::requests(&history);
                let messages = convert::messages(&history, &requests);
                let schemas = outgoing::schema_texts(&prepared.tools);
                let tools = convert::tool_specs(&prepared.tools, &schemas);
                let turn = convert::prepared(&prepared, &messages, &tools);
                let answer = harness.call_run_attempt(&mut *store, borrowed, turn).await;
                // The turn ends with the call: the guest cannot keep it, nor
                // the processes it opened.
                store.data_mut().end_turn_processes();
                store.data_mut().table.delete(own)?;
                let answer = answer?;
                let size = match &answer {
                    Ok(s) => s.len(),
                    Err(e) => convert::attempt_error_len(e),
                };
                Reply::new(
                    Answer::Attempt(answer.map_err(convert::attempt_error)),
                    size,
                )
            }
            Request::Reset(session) => {
                let harness = self.harness.as_ref().ok_or_else(|| missing("harness"))?;
                harness.call_reset(&mut *store, &session).await?;
                Reply::new(Answer::Done, 0)
            }
            Request::Dispose => {
                let harness = self.harness.as_ref().ok_or_else(|| missing("harness"))?;
                harness.call_dispose(&mut *store).await?;
                Reply::new(Answer::Done, 0)
            }
        })
    }

    /// Ask every exported interface what it provides.
    async fn declare(&self, store: &mut Store<PluginState>) -> wasmtime::Result<Declared> {
        let mut d = Declared::default();
        if let Some(p) = &self.tool_provider {
            d.tools = p
                .call_tools(&mut *store)
                .await?
                .into_iter()
                .map(|t| DeclaredTool {
                    name: t.name,
                    description: t.description,
                    parameters: t.parameters,
                })
                .collect();
        }
        if let Some(f) = &self.tool_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                let kind = hooks::tool_hook(s.hook);
                d.hooks.push((kind, s.priority));
                if !s.tools.is_empty() {
                    d.tool_filters.push((kind, s.tools));
                }
            }
        }
        if let Some(f) = &self.prompt_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks.push((hooks::prompt_hook(s.hook), s.priority));
            }
        }
        if let Some(f) = &self.model_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks.push((hooks::model_hook(s.hook), s.priority));
            }
        }
        if let Some(f) = &self.session_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks.push((hooks::session_hook(s.hook), s.priority));
            }
        }
        if let Some(f) = &self.transcript_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks.push((hooks::transcript_hook(s.hook), s.priority));
            }
        }
        if let Some(f) = &self.tool_gate {
            // `tool-gate` is where such a component gets `before-tool-call`:
            // a subscription through `tool-hooks` too would be a second handler.
            let before = HookKind::BeforeToolCall;
            d.hooks.retain(|(k, _)| *k != before);
            d.tool_filters.retain(|(k, _)| *k != before);
            if let Some(s) = f.call_subscription(&mut *store).await? {
                d.hooks.push((before, s.priority));
                if !s.tools.is_empty() {
                    d.tool_filters.push((before, s.tools));
                }
            }
        }
        if let Some(f) = &self.persist_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks.push((hooks::persist_hook(s.hook), s.priority));
            }
        }
        if let Some(f) = &self.run_hooks {
            // `llm-input` / `llm-output` in full: a subscription through the
            // 0.2.0 `model-hooks` too would be a second handler.
            let full = [HookKind::LlmInput, HookKind::LlmOutput];
            let subs = f.call_subscriptions(&mut *store).await?;
            let kinds: Vec<HookKind> = subs.iter().map(|s| hooks::run_hook(s.hook)).collect();
            d.hooks
                .retain(|(k, _)| !(full.contains(k) && kinds.contains(k)));
            for (s, kind) in subs.into_iter().zip(kinds) {
                d.hooks.push((kind, s.priority));
            }
        }
        if let Some(f) = &self.compaction_provider {
            if let Some(priority) = f.call_offer(&mut *store).await? {
                d.hooks.push((HookKind::CompactionProvider, priority));
            }
        }
        if let Some(f) = &self.turn_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks.push((turn_hooks::turn_hook(s.hook), s.priority));
            }
        }
        if let Some(f) = &self.prepare_hooks {
            for s in f.call_subscriptions(&mut *store).await? {
                d.hooks
                    .push((prepare_hooks::prepare_hook(s.hook), s.priority));
            }
        }
        if let Some(h) = &self.harness {
            d.harnesses.push(h.call_id(&mut *store).await?);
        }
        Ok(d)
    }
}

impl host::Host for PluginState {
    fn log(&mut self, level: host::Level, message: String) {
        use crate::logs::{LogLevel, LogSource};
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
impl agent_turn::Host for PluginState {}

#[cfg(test)]
mod tests {
    use wasmtime::component::{Component, Linker};
    use wasmtime::{Config, Engine};

    use super::Indices;
    use crate::state::PluginState;

    #[test]
    fn an_export_with_the_wrong_types_is_an_error_not_a_missing_family() {
        // `tool-hooks@0.2.0` whose `subscriptions` returns a u32 instead of a list.
        let wat = r#"(component
            (core module $m (func (export "f") (result i32) i32.const 0))
            (core instance $i (instantiate $m))
            (func $f (result u32) (canon lift (core func $i "f")))
            (instance $hooks (export "subscriptions" (func $f)))
            (export "openclaw:plugin/tool-hooks@0.2.0" (instance $hooks)))"#;
        let mut config = Config::new();
        config.wasm_component_model(true);
        let engine = Engine::new(&config).unwrap();
        let component = Component::new(&engine, wat::parse_str(wat).unwrap()).unwrap();
        let linker: Linker<PluginState> = Linker::new(&engine);
        let pre = linker.instantiate_pre(&component).unwrap();
        let err = format!("{:#}", Indices::new(&pre).err().expect("refused"));
        assert!(
            err.contains("`openclaw:plugin/tool-hooks` export does not match API 0.2"),
            "{err}"
        );
    }
}
