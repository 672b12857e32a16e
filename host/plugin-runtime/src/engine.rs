//! The one wasmtime engine: component model, epoch interruption, pooling
//! allocator, a shared linker, and the epoch ticker thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::state::PluginState;

/// How often the epoch advances: a running guest yields and has its deadline
/// checked this often.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Instance slots (component instances and fiber stacks) for a host that
/// expects `packages` plugins: one live instance each, twice over (a
/// restarted instance may overlap the one it replaces; an install check or
/// a dev overlay adds packages later), and at least 16. Every pooled stack
/// costs mappings at start-up, so the pool follows the plugin count.
pub fn instance_slots(packages: usize) -> u32 {
    packages.saturating_mul(2).saturating_add(16).min(4096) as u32
}

/// The engine and linker shared by every plugin.
pub struct PluginEngine {
    engine: Engine,
    linker: Linker<PluginState>,
    stop: Arc<AtomicBool>,
}

impl Drop for PluginEngine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn base_config() -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config
}

impl PluginEngine {
    /// Build the engine. `memory_cap` sizes the pooling allocator's memory
    /// slots and `slots` ([`instance_slots`]) its instances and stacks (it
    /// falls back to on-demand allocation where pooling cannot reserve memory).
    pub fn new(memory_cap: u64, slots: u32) -> wasmtime::Result<Self> {
        let mut pooling = PoolingAllocationConfig::default();
        // One live instance per plugin and calls into a plugin serialized, so
        // at most one fiber stack per instance is in use.
        pooling
            .total_stacks(slots)
            .total_component_instances(slots)
            .total_core_instances(slots.saturating_mul(4).max(1024))
            .total_memories(slots.max(256))
            .total_tables(slots.saturating_mul(2).max(512))
            .max_memory_size(memory_cap.max(1 << 20) as usize);
        let mut config = base_config();
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
        let engine = match Engine::new(&config) {
            Ok(engine) => engine,
            Err(e) => {
                tracing::warn!(error = %e, "pooling allocator unavailable; using on-demand allocation");
                Engine::new(&base_config())?
            }
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        crate::abi::add_to_linker(&mut linker)?;

        let stop = Arc::new(AtomicBool::new(false));
        let ticker_engine = engine.clone();
        let ticker_stop = stop.clone();
        std::thread::Builder::new()
            .name("clawhost-epoch".into())
            .spawn(move || {
                while !ticker_stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    ticker_engine.increment_epoch();
                }
            })?;
        Ok(Self {
            engine,
            linker,
            stop,
        })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The linker with WASI and the host interface.
    pub fn linker(&self) -> &Linker<PluginState> {
        &self.linker
    }
}
