//! Per-instance store data: the WASI context, the handle table and the
//! resource limits. The API's host interfaces are implemented per version in `abi`.

use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use clawhost_agent_core::TurnServices;
use clawhost_process_channel::ProcessSpec;

use crate::logs::PluginLogs;

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
    /// Bytes the instance's memories and tables hold now.
    pub fn used(&self) -> usize {
        self.used
    }

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
    /// Handles the guest holds (WASI's and the API's resources).
    pub(crate) table: ResourceTable,
    /// Memory cap of this instance.
    pub memory: MemoryCap,
    pub(crate) logs: Arc<PluginLogs>,
    pub(crate) config_json: Arc<str>,
    /// API 0.1 only: the turn a harness is running, while `run-attempt` is in
    /// progress (0.2 hands the harness a `turn` resource instead).
    pub(crate) services: Option<Arc<dyn TurnServices>>,
    /// When the running call is stopped (checked at every epoch tick).
    pub(crate) deadline: std::time::Instant,
    /// Processes the plugin may open, by name (API 0.2.2 `native-runtime`).
    pub(crate) processes: Arc<BTreeMap<String, ProcessSpec>>,
    /// Handles of the processes opened during the running `run-attempt`:
    /// stopped when it ends, whatever the guest kept.
    pub(crate) turn_processes: Vec<u32>,
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
            deadline: std::time::Instant::now(),
            processes: Arc::default(),
            turn_processes: Vec::new(),
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
