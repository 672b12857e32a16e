//! Per-instance store data: the WASI context, resource limits, and the host
//! interface (`log`, `config`) a plugin may call.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use clawhost_agent_core::TurnServices;

use crate::bindings::{host, turn};
use crate::logs::{LogLevel, LogSource, PluginLogs};
use crate::turn_convert as tc;

/// Host bytes charged per table element (a pointer-sized slot).
pub const TABLE_ELEMENT_BYTES: usize = 8;

/// One memory budget for a whole instance: every linear memory and every
/// table of every core instance inside the component draws from it, so
/// multi-memory or table growth cannot multiply the cap. Growth past it traps.
pub struct MemoryCap {
    cap: usize,
    used: usize,
    /// Set when a growth past the budget was refused.
    pub hit: bool,
}

impl MemoryCap {
    /// A budget of `bytes` for the instance.
    pub fn new(bytes: u64) -> Self {
        Self {
            cap: usize::try_from(bytes).unwrap_or(usize::MAX),
            used: 0,
            hit: false,
        }
    }

    fn grow(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        let after = self.used.saturating_sub(current).saturating_add(desired);
        if after > self.cap {
            self.hit = true;
            wasmtime::bail!(
                "instance memory budget of {} bytes exceeded (asked for {after})",
                self.cap
            );
        }
        self.used = after;
        Ok(true)
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.grow(current, desired, maximum)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.grow(
            current.saturating_mul(TABLE_ELEMENT_BYTES),
            desired.saturating_mul(TABLE_ELEMENT_BYTES),
            maximum.map(|m| m.saturating_mul(TABLE_ELEMENT_BYTES)),
        )
    }

    fn instances(&self) -> usize {
        64
    }
    fn tables(&self) -> usize {
        64
    }
    fn memories(&self) -> usize {
        16
    }
}

/// The data of one plugin instance's store.
pub struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    /// Memory cap of this instance.
    pub memory: MemoryCap,
    logs: Arc<PluginLogs>,
    config_json: Arc<str>,
    /// The turn a harness is running, while `run-attempt` is in progress.
    pub services: Option<Arc<dyn TurnServices>>,
}

impl PluginState {
    /// State for a fresh instance;
    /// `max_handles` bounds the handles (files, streams, pollables) it may hold.
    pub fn new(
        wasi: WasiCtx,
        memory: MemoryCap,
        max_handles: usize,
        logs: Arc<PluginLogs>,
        config_json: Arc<str>,
    ) -> Self {
        let mut table = ResourceTable::new();
        table.set_max_capacity(max_handles);
        Self {
            wasi,
            table,
            memory,
            logs,
            config_json,
            services: None,
        }
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
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

impl crate::bindings::wit::Host for PluginState {}
impl turn::Host for PluginState {}

const NO_TURN: &str =
    "no turn is in progress: model and tool calls are only available inside run-attempt";

impl crate::bindings::openclaw::plugin::model::Host for PluginState {
    async fn complete(
        &mut self,
        system: Option<String>,
        messages: Vec<turn::Message>,
        tools: Vec<turn::ToolSpec>,
    ) -> Result<turn::ModelReply, String> {
        let services = self.services.clone().ok_or_else(|| NO_TURN.to_string())?;
        let messages = messages.into_iter().map(tc::from_message).collect();
        let tools = tools.into_iter().map(tc::from_tool_spec).collect();
        services
            .complete(system, messages, tools)
            .await
            .map(|r| tc::model_reply(&r))
            .map_err(|e| e.to_string())
    }
}

impl crate::bindings::openclaw::plugin::tools::Host for PluginState {
    async fn available(&mut self) -> Vec<turn::ToolSpec> {
        self.services
            .as_ref()
            .map(|s| s.tools().iter().map(tc::tool_spec).collect())
            .unwrap_or_default()
    }

    async fn call(&mut self, request: turn::ToolRequest) -> turn::ToolOutput {
        match self.services.clone() {
            Some(services) => {
                tc::tool_output(&services.call_tool(tc::from_tool_request(request)).await)
            }
            None => turn::ToolOutput {
                content: NO_TURN.into(),
                is_error: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use wasmtime::{Engine, Instance, Module, Store};

    use super::MemoryCap;

    fn run(wat: &str, budget: u64) -> (wasmtime::Result<i32>, bool) {
        let engine = Engine::default();
        let module = Module::new(&engine, wat::parse_str(wat).unwrap()).unwrap();
        let mut store = Store::new(&engine, MemoryCap::new(budget));
        store.limiter(|cap| cap);
        let result = Instance::new(&mut store, &module, &[]).and_then(|instance| {
            instance
                .get_typed_func::<(), i32>(&mut store, "run")?
                .call(&mut store, ())
        });
        (result, store.data().hit)
    }

    #[test]
    fn several_memories_share_one_budget() {
        // Two memories of 1 MiB each fit a 3 MiB budget one at a time, not
        // together once one of them grows.
        let wat = r#"(module
            (memory $a 16) (memory $b 16)
            (func (export "run") (result i32) (memory.grow $b (i32.const 24))))"#;
        let (ok, hit) = run(wat, 4 << 20);
        assert_eq!((ok.unwrap(), hit), (16, false));
        let (err, hit) = run(wat, 3 << 20);
        assert!(err.is_err() && hit, "{err:?}");
        // Three memories at instantiation already exceed it.
        let (err, hit) = run(
            r#"(module (memory 16) (memory 16) (memory 16)
                (func (export "run") (result i32) (i32.const 0)))"#,
            2 << 20,
        );
        assert!(err.is_err() && hit, "{err:?}");
    }

    #[test]
    fn table_growth_draws_from_the_same_budget() {
        let wat = r#"(module
            (memory 16)
            (table 0 funcref)
            (func (export "run") (result i32)
                (table.grow (ref.null func) (i32.const 200000))))"#;
        let (err, hit) = run(wat, 2 << 20);
        assert!(err.is_err() && hit, "{err:?}");
        let (ok, _) = run(wat, 4 << 20);
        assert_eq!(ok.unwrap(), 0);
    }
}
