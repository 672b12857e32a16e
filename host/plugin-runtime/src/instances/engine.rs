//! The one wasmtime engine: component model, epoch interruption, on-demand
//! instance allocation, a shared linker (built at the first link), and the
//! epoch ticker thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

use crate::cache::FunctionCache;
use crate::state::PluginState;

/// How often the epoch advances: a running guest yields and has its deadline
/// checked this often.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The engine and linker shared by every plugin.
pub struct PluginEngine {
    engine: Engine,
    /// Built when a plugin first links: a warm start whose plugins are
    /// all remembered links none of them.
    linker: OnceLock<Linker<PluginState>>,
    stop: Arc<AtomicBool>,
}

impl Drop for PluginEngine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl PluginEngine {
    /// Build the engine. Instances are allocated on demand, not from a
    /// pool: a pool maps and guards a slot per plugin when the engine is
    /// made, so start-up would grow with the plugin count, while a store
    /// allocates its memory and fiber stack at its first instantiation and
    /// keeps the stack for every later call. What one instance may take is
    /// bounded by its store's limiter (`MemoryCap`), not by a pool.
    ///
    /// Cranelift keeps each function it compiles in `functions` (on disk
    /// once the component cache attaches it), so code compiled before is
    /// not compiled again.
    pub fn new(functions: Arc<FunctionCache>) -> wasmtime::Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        config.enable_incremental_compilation(functions)?;
        let engine = Engine::new(&config)?;

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
            linker: OnceLock::new(),
            stop,
        })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The linker with WASI and the host interface, built at its first use.
    pub fn linker(&self) -> wasmtime::Result<&Linker<PluginState>> {
        if let Some(linker) = self.linker.get() {
            return Ok(linker);
        }
        let mut linker = Linker::new(&self.engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        crate::abi::add_to_linker(&mut linker)?;
        // Two first links at once both build one; either serves.
        Ok(self.linker.get_or_init(|| linker))
    }
}
