//! Per-instance store data: the WASI context, resource limits, and the host
//! interface (`log`, `config`) a plugin may call.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use clawhost_agent_core::TurnServices;

use crate::bindings::{host, turn};
use crate::logs::{LogLevel, LogSource, PluginLogs};
use crate::turn_convert as tc;

/// A [`StoreLimits`] that remembers whether it refused a memory growth, so a
/// trap can be reported as "memory limit" rather than a generic trap.
pub struct MemoryCap {
    limits: StoreLimits,
    cap: usize,
    /// Set when a growth past the cap was refused.
    pub hit: bool,
}

impl MemoryCap {
    /// A cap of `bytes` per linear memory; growth past it traps.
    pub fn new(bytes: u64) -> Self {
        let cap = usize::try_from(bytes).unwrap_or(usize::MAX);
        Self {
            limits: StoreLimitsBuilder::new()
                .memory_size(cap)
                .instances(64)
                .tables(64)
                .memories(16)
                .trap_on_grow_failure(true)
                .build(),
            cap,
            hit: false,
        }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.hit = true;
        }
        self.limits.memory_growing(current, desired, maximum)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }
    fn tables(&self) -> usize {
        self.limits.tables()
    }
    fn memories(&self) -> usize {
        self.limits.memories()
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
    /// State for a fresh instance.
    pub fn new(
        wasi: WasiCtx,
        memory: MemoryCap,
        logs: Arc<PluginLogs>,
        config_json: Arc<str>,
    ) -> Self {
        Self {
            wasi,
            table: ResourceTable::new(),
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
