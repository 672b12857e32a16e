//! One plugin's live instance: calls with a wall-clock deadline and a memory
//! cap, discarding a trapped instance and disabling a plugin that keeps trapping.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex as SyncMutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use wasmtime::component::InstancePre;
use wasmtime::{Store, Trap, UpdateDeadline};

use crate::abi::{Answer, ApiVersion, Declared, Guest, Indices, Request};
use crate::cache::CacheOutcome;
use crate::component_source::LazyComponent;
use crate::engine::PluginEngine;
use crate::logs::PluginLogs;
use crate::sandbox::EffectiveGrants;
use crate::state::{MemoryCap, PluginState};
use crate::CallError;

/// Extra time the host waits beyond the epoch deadline before abandoning a
/// call that is blocked in a host function (e.g. a guest sleeping in WASI).
const HOST_GRACE: Duration = Duration::from_millis(250);

struct Live {
    store: Store<PluginState>,
    guest: Guest,
}

/// Limits applied to every call.
#[derive(Debug, Clone, Copy)]
pub struct CallLimits {
    /// Memory cap per instance, in bytes.
    pub memory_bytes: u64,
    /// Wall-clock deadline per call.
    pub timeout: Duration,
    /// Traps in a row before the plugin is disabled.
    pub max_consecutive_traps: u32,
    /// Wall-clock deadline of one harness turn.
    pub harness_turn_timeout: Duration,
    /// Largest text one call may hand back, in bytes.
    pub max_output_bytes: usize,
    /// Handles one instance may hold at once.
    pub max_handles: usize,
}

/// What the first instance does with its own `register` answer, when the
/// plugin was loaded from a remembered declaration.
pub(crate) type FirstRegister = Box<dyn FnOnce(Declared) + Send + Sync>;

/// A component linked to the host's imports, its exports looked up.
struct Linked {
    pre: InstancePre<PluginState>,
    indices: Indices,
}

/// The running side of a loaded plugin.
pub(crate) struct PluginInstance {
    id: String,
    engine: Arc<PluginEngine>,
    component: LazyComponent,
    /// Set by [`Self::link`] at load, or at the first instantiation when a
    /// remembered declaration let the load skip it.
    /// Boxed, as is `live`: a start builds one instance per plugin and
    /// uses few, so what they hold at first use stays off the start's path.
    linked: OnceLock<Box<Linked>>,
    is_harness: bool,
    api: ApiVersion,
    grants: EffectiveGrants,
    config_json: Arc<str>,
    logs: Arc<PluginLogs>,
    limits: CallLimits,
    live: Mutex<Option<Box<Live>>>,
    consecutive_traps: AtomicU32,
    instantiations: AtomicU32,
    disabled: SyncMutex<Option<String>>,
    /// Set while no instance has answered `register` yet (a remembered
    /// declaration stood in for it): the first instance calls it and hands
    /// the answer here.
    first_register: SyncMutex<Option<FirstRegister>>,
}

impl PluginInstance {
    /// A plugin instance of `component` (a harness when `is_harness`), not
    /// linked yet (see [`Self::link`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: String,
        engine: Arc<PluginEngine>,
        component: LazyComponent,
        is_harness: bool,
        api: ApiVersion,
        grants: EffectiveGrants,
        config_json: Arc<str>,
        logs: Arc<PluginLogs>,
        limits: CallLimits,
    ) -> Self {
        Self {
            id,
            engine,
            is_harness,
            component,
            linked: OnceLock::new(),
            api,
            grants,
            config_json,
            logs,
            limits,
            live: Mutex::new(None),
            consecutive_traps: AtomicU32::new(0),
            instantiations: AtomicU32::new(0),
            disabled: SyncMutex::new(None),
            first_register: SyncMutex::new(None),
        }
    }

    /// Link the component to the host's imports and look up its exports:
    /// an import the host lacks or an export of the wrong types is an error.
    /// Done at load, unless a remembered declaration (written after this
    /// very component linked in this host version) lets the first
    /// instantiation do it.
    pub(crate) async fn link(&self) -> wasmtime::Result<()> {
        self.linked().await.map(|_| ())
    }

    async fn linked(&self) -> wasmtime::Result<&Linked> {
        if let Some(linked) = self.linked.get() {
            return Ok(linked);
        }
        let component = self
            .component
            .get()
            .await
            .map_err(|e| wasmtime::format_err!("{e}"))?;
        let pre = self.engine.linker()?.instantiate_pre(component)?;
        let indices = Indices::new(self.api, &pre)?;
        // Calls into one plugin are serialized, so no other thread links it
        // meanwhile; if one did, its equal result stands.
        Ok(self
            .linked
            .get_or_init(|| Box::new(Linked { pre, indices })))
    }

    /// The plugin was loaded from a remembered declaration: its first
    /// instance calls `register` before anything else and hands the answer
    /// to `then`.
    pub(crate) fn register_on_first_instance(&self, then: FirstRegister) {
        *self
            .first_register
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(then);
    }

    fn registers_first(&self) -> bool {
        self.first_register
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Why the plugin is disabled, if it is.
    pub(crate) fn disabled_reason(&self) -> Option<String> {
        self.disabled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// How many instances were created so far (1 + re-instantiations).
    pub(crate) fn instantiations(&self) -> u32 {
        self.instantiations.load(Ordering::Relaxed)
    }

    /// Traps in a row so far.
    pub(crate) fn consecutive_traps(&self) -> u32 {
        self.consecutive_traps.load(Ordering::Relaxed)
    }

    pub(crate) fn grants(&self) -> &EffectiveGrants {
        &self.grants
    }

    async fn instantiate(&self) -> wasmtime::Result<Box<Live>> {
        let wasi = self.grants.wasi_ctx(&self.logs)?;
        let state = PluginState::new(
            wasi,
            MemoryCap::new(self.limits.memory_bytes),
            self.limits.max_handles,
            self.logs.clone(),
            self.config_json.clone(),
        );
        let mut store = Store::new(self.engine.engine(), state);
        store.limiter(|s| &mut s.memory);
        // At every epoch tick the guest runs, it yields to the async runtime
        // (a spinning guest never holds a host thread), until its call's
        // deadline passes: then it is stopped with an interrupt trap.
        // tokio's `yield_now` lets the runtime poll its I/O before the guest
        // runs again (a plain wake would starve sockets on that thread).
        store.epoch_deadline_callback(|store| {
            if Instant::now() >= store.data().deadline {
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::YieldCustom(
                1,
                Box::pin(tokio::task::yield_now()),
            ))
        });
        store.data_mut().deadline = Instant::now() + self.limits.timeout;
        store.set_epoch_deadline(1);
        let linked = self.linked().await?;
        let instance = linked.pre.instantiate_async(&mut store).await?;
        let guest = linked.indices.load(&mut store, &instance)?;
        self.instantiations.fetch_add(1, Ordering::Relaxed);
        if self.registers_first() {
            // As at a load without a record: `register` runs first, under
            // the instance's own deadline.
            let reply = guest.call(&mut store, Request::Register).await?;
            let then = self
                .first_register
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            match (then, reply.answer) {
                (Some(then), Answer::Declared(d))
                    if reply.largest_text <= self.limits.max_output_bytes =>
                {
                    then(d)
                }
                _ => {
                    tracing::warn!(plugin = %self.id, "the first instance's register answer is too large; the remembered declaration stands")
                }
            }
        }
        Ok(Box::new(Live { store, guest }))
    }

    /// Discard the live instance (its state is lost) and start a fresh one.
    pub(crate) async fn restart(&self) -> Result<(), CallError> {
        let mut slot = self.live.lock().await;
        *slot = None;
        self.load_component().await?;
        let live = self.instantiate().await.map_err(|e| CallError::Trapped {
            id: self.id.clone(),
            reason: format!("instantiation failed: {}", e.root_cause()),
        })?;
        *slot = Some(live);
        Ok(())
    }

    /// Acquire the component now if the load deferred it (see
    /// [`LazyComponent`]), and say how it was acquired.
    pub(crate) async fn load_component(&self) -> Result<CacheOutcome, CallError> {
        match self.component.get().await {
            Ok(_) => Ok(self.component.outcome()),
            Err(e) => Err(CallError::Unloadable {
                id: self.id.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// How the component was acquired (`Deferred` while it is not yet).
    pub(crate) fn component_outcome(&self) -> CacheOutcome {
        self.component.outcome()
    }

    /// Whether the component exports the harness interface.
    pub(crate) fn is_harness(&self) -> bool {
        self.is_harness
    }

    /// The API version the component was built against.
    pub(crate) fn api(&self) -> ApiVersion {
        self.api
    }

    /// Make one call. Calls into one plugin are serialized.
    pub(crate) async fn call(&self, request: Request<'_>) -> Result<Answer, CallError> {
        let mut slot = self.live.lock().await;
        if let Some(reason) = self.disabled_reason() {
            return Err(CallError::Disabled {
                id: self.id.clone(),
                reason,
            });
        }
        let timeout = match &request {
            Request::RunAttempt(..) => self.limits.harness_turn_timeout,
            Request::Hook(_, Some(timeout)) => *timeout,
            _ => self.limits.timeout,
        };
        // A new instance first gets its own deadline (and `register`, when
        // it is the first one).
        let deadline = timeout
            + HOST_GRACE
            + if slot.is_none() {
                self.limits.timeout
            } else {
                Duration::ZERO
            };
        if slot.is_none() {
            // Host work, outside the guest's deadline: mapping a deferred
            // component (or compiling it, if its artifact went meanwhile).
            if let Err(error) = self.load_component().await {
                return Err(self.failed(&mut slot, error));
            }
        }
        self.logs.begin_call();
        let run = async {
            if slot.is_none() {
                *slot = Some(self.instantiate().await?);
            }
            let live = slot.as_mut().expect("instantiated above");
            live.store.data_mut().deadline = Instant::now() + timeout;
            live.store.set_epoch_deadline(1);
            let what = request.what();
            let Live { store, guest } = &mut **live;
            Ok::<_, wasmtime::Error>((guest.call(store, request).await?, what))
        };
        let outcome = tokio::time::timeout(deadline, run).await;
        self.logs.end_call();
        let error = match outcome {
            Ok(Ok((reply, what))) => {
                self.consecutive_traps.store(0, Ordering::Relaxed);
                if reply.largest_text > self.limits.max_output_bytes {
                    // The instance is sound; only this answer is refused.
                    return Err(CallError::OutputTooLarge {
                        id: self.id.clone(),
                        what,
                        bytes: reply.largest_text,
                        limit_kb: self.limits.max_output_bytes >> 10,
                    });
                }
                return Ok(reply.answer);
            }
            Ok(Err(e)) => self.classify(&e, slot.as_deref(), timeout),
            Err(_elapsed) => CallError::Timeout {
                id: self.id.clone(),
                timeout_ms: timeout.as_millis() as u64,
            },
        };
        Err(self.failed(&mut slot, error))
    }

    /// Count a failed call: the instance in `slot` (trapped or abandoned)
    /// is never reused, and a plugin that keeps failing is disabled.
    fn failed(&self, slot: &mut Option<Box<Live>>, error: CallError) -> CallError {
        *slot = None;
        let traps = self.consecutive_traps.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::warn!(plugin = %self.id, traps, error = %error, "plugin call failed; instance discarded");
        if traps >= self.limits.max_consecutive_traps {
            let reason = format!("{traps} failed calls in a row, the last: {error}");
            tracing::error!(plugin = %self.id, %reason, "plugin disabled");
            *self.disabled.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason);
        }
        error
    }

    fn classify(&self, e: &wasmtime::Error, live: Option<&Live>, timeout: Duration) -> CallError {
        if live.is_some_and(|l| l.store.data().memory.hit) {
            return CallError::MemoryLimit {
                id: self.id.clone(),
                limit_mb: self.limits.memory_bytes >> 20,
            };
        }
        if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return CallError::Timeout {
                id: self.id.clone(),
                timeout_ms: timeout.as_millis() as u64,
            };
        }
        // The trap itself, without the wasm backtrace (that goes to the log):
        // this text reaches the model and the transcript.
        tracing::debug!(plugin = %self.id, error = ?e, "plugin trap");
        let reason = match e.downcast_ref::<Trap>() {
            Some(trap) => trap.to_string(),
            None => e.root_cause().to_string(),
        };
        CallError::Trapped {
            id: self.id.clone(),
            reason,
        }
    }
}
