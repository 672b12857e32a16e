//! One plugin's live instance: calls with a wall-clock deadline and a memory
//! cap, discarding a trapped or cancelled instance and quarantining a plugin
//! that keeps failing (see [`crate::health`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex as SyncMutex, OnceLock};
use std::time::{Duration, Instant};

use clawhost_agent_core::TurnStopped;
use tokio::sync::Mutex;
use wasmtime::component::InstancePre;
use wasmtime::{Store, Trap, UpdateDeadline};

use crate::abi::{Answer, ApiVersion, Declared, Guest, Indices, Request};
use crate::cache::CacheOutcome;
use crate::component_source::LazyComponent;
use crate::engine::PluginEngine;
use crate::health::Health;
use crate::logs::PluginLogs;
use crate::sandbox::EffectiveGrants;
use crate::state::{MemoryCap, PluginState};
use crate::stats::{Ending, PluginStats, Stats};
use crate::CallError;

/// Extra time the host waits beyond the epoch deadline before abandoning a
/// call that is blocked in a host function (e.g. a guest sleeping in WASI):
/// a spinning guest is interrupted at the next epoch tick (5 ms) before it.
const HOST_GRACE: Duration = Duration::from_millis(50);

/// Harness turns one plugin runs at once: a turn that finds the plugin's
/// instance busy (another session's turn holds it for the whole turn) runs
/// in a fresh instance of its own, dropped when the turn ends; past this
/// many, a turn waits.
pub(crate) const MAX_CONCURRENT_TURNS: usize = 8;

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
    /// Failed calls in a row before the plugin is quarantined.
    pub max_consecutive_traps: u32,
    /// The first quarantine's length (doubled by each failed retry).
    pub quarantine: Duration,
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
    /// The instance between calls. During a call it is out of the slot, in
    /// the call's future: a cancelled call drops it with the future.
    live: Mutex<Option<Box<Live>>>,
    instantiations: AtomicU32,
    health: SyncMutex<Health>,
    stats: Stats,
    /// Set while no instance has answered `register` yet (a remembered
    /// declaration stood in for it): the first instance calls it and hands
    /// the answer here.
    first_register: SyncMutex<Option<FirstRegister>>,
    /// Turns running in instances of their own (the slot's instance busy).
    extra_turns: tokio::sync::Semaphore,
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
            instantiations: AtomicU32::new(0),
            health: SyncMutex::new(Health::default()),
            stats: Stats::default(),
            first_register: SyncMutex::new(None),
            extra_turns: tokio::sync::Semaphore::new(MAX_CONCURRENT_TURNS - 1),
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
        *clawhost_agent_core::lock(&self.first_register) = Some(then);
    }

    fn registers_first(&self) -> bool {
        clawhost_agent_core::lock(&self.first_register).is_some()
    }

    fn health(&self) -> std::sync::MutexGuard<'_, Health> {
        clawhost_agent_core::lock(&self.health)
    }

    /// Why the plugin is quarantined and how long until its next trial call
    /// (zero once the backoff passed), if it is.
    pub(crate) fn quarantine(&self) -> Option<(String, Duration)> {
        let now = Instant::now();
        self.health()
            .quarantine()
            .map(|q| (q.reason.clone(), q.until.saturating_duration_since(now)))
    }

    /// How many instances were created so far (1 + re-instantiations).
    pub(crate) fn instantiations(&self) -> u32 {
        self.instantiations.load(Ordering::Relaxed)
    }

    /// The plugin's call counters.
    pub(crate) fn stats(&self) -> PluginStats {
        self.stats.snapshot()
    }

    /// Failed calls in a row so far.
    pub(crate) fn consecutive_failures(&self) -> u32 {
        self.health().failures()
    }

    pub(crate) fn grants(&self) -> &EffectiveGrants {
        &self.grants
    }

    /// A fresh instance whose start (and `register`, when it is the first)
    /// must end by `deadline`.
    async fn instantiate(&self, deadline: Instant) -> wasmtime::Result<Box<Live>> {
        let wasi = self.grants.wasi_ctx(&self.logs)?;
        let mut state = PluginState::new(
            wasi,
            MemoryCap::new(self.limits.memory_bytes),
            self.limits.max_handles,
            self.logs.clone(),
            self.config_json.clone(),
        );
        state.processes = self.grants.processes.clone();
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
        store.data_mut().deadline = deadline;
        store.set_epoch_deadline(1);
        let linked = self.linked().await?;
        let instance = linked.pre.instantiate_async(&mut store).await?;
        let guest = linked.indices.load(&mut store, &instance)?;
        self.instantiations.fetch_add(1, Ordering::Relaxed);
        if self.registers_first() {
            // As at a load without a record: `register` runs first, under
            // the instance's own deadline.
            let reply = guest.call(&mut store, Request::Register).await?;
            let then = clawhost_agent_core::lock(&self.first_register).take();
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
        let deadline = Instant::now() + self.limits.timeout;
        let live = self
            .instantiate(deadline)
            .await
            .map_err(|e| CallError::Trapped {
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

    /// Make one call. Calls into one plugin are serialized. The call (a
    /// fresh instance's start included) ends by its deadline whatever the
    /// guest is doing; dropping the returned future cancels it and discards
    /// the instance, which is not counted against the plugin.
    pub(crate) async fn call(&self, request: Request<'_>) -> Result<Answer, CallError> {
        use tracing::Instrument;
        let span = tracing::info_span!("plugin_call", plugin = %self.id, what = request.what());
        self.call_traced(request).instrument(span).await
    }

    async fn call_traced(&self, request: Request<'_>) -> Result<Answer, CallError> {
        // A harness turn holds its instance for the whole turn: a turn of
        // another session (and the route question that selects it) runs
        // meanwhile in a fresh instance of its own (bounded), which ends
        // with it.
        if matches!(request, Request::RunAttempt(..) | Request::Supports(..)) {
            if let Ok(mut slot) = self.live.try_lock() {
                return self.call_in(&mut slot, request).await;
            }
            if let Ok(_turn) = self.extra_turns.try_acquire() {
                return self.call_in(&mut None, request).await;
            }
        }
        let mut slot = self.live.lock().await;
        self.call_in(&mut slot, request).await
    }

    /// [`Self::call`] on the instance in `slot` (a fresh one when it is
    /// empty), left there when the call is served.
    async fn call_in(
        &self,
        slot: &mut Option<Box<Live>>,
        request: Request<'_>,
    ) -> Result<Answer, CallError> {
        if let Some(q) = self.health().refusing(Instant::now()) {
            self.stats.refused();
            return Err(CallError::Quarantined {
                id: self.id.clone(),
                reason: q.reason.clone(),
                retry_in_ms: q
                    .until
                    .saturating_duration_since(Instant::now())
                    .as_millis() as u64,
            });
        }
        let timeout = match &request {
            Request::RunAttempt(..) => self.limits.harness_turn_timeout,
            Request::Hook(_, Some(timeout)) => *timeout,
            _ => self.limits.timeout,
        };
        let mut live = slot.take();
        if live.is_none() {
            // Host work, outside the guest's deadline: mapping a deferred
            // component (or compiling it, if its artifact went meanwhile).
            if let Err(error) = self.load_component().await {
                return Err(self.failed(error));
            }
        }
        let deadline = Instant::now() + timeout;
        let _call = self.logs.call();
        let timing = self.stats.begin();
        let run = async {
            let mut live = match live.take() {
                Some(live) => live,
                None => self.instantiate(deadline).await.map_err(|e| (None, e))?,
            };
            live.store.data_mut().deadline = deadline;
            live.store.set_epoch_deadline(1);
            let what = request.what();
            let Live { store, guest } = &mut *live;
            match guest.call(store, request).await {
                Ok(reply) => Ok((live, reply, what)),
                Err(e) => Err((Some(live), e)),
            }
        };
        let give_up = tokio::time::Instant::from_std(deadline + HOST_GRACE);
        let error = match tokio::time::timeout_at(give_up, run).await {
            Ok(Ok((live, reply, what))) => {
                self.stats.memory_used(live.store.data().memory.used());
                timing.finish(Ending::Served);
                *slot = Some(live);
                if self.health().served() {
                    tracing::info!(plugin = %self.id, "plugin served a call again; quarantine ended");
                }
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
            Ok(Err((_, e))) if e.downcast_ref::<TurnStopped>().is_some() => {
                // The host's own doing: the instance goes, uncounted.
                timing.finish(Ending::Stopped);
                return Err(CallError::Stopped {
                    id: self.id.clone(),
                    reason: e.to_string(),
                });
            }
            Ok(Err((live, e))) => {
                if let Some(live) = &live {
                    self.stats.memory_used(live.store.data().memory.used());
                }
                self.classify(&e, live.as_deref(), timeout)
            }
            Err(_elapsed) => CallError::Timeout {
                id: self.id.clone(),
                timeout_ms: timeout.as_millis() as u64,
            },
        };
        timing.finish(Ending::of(&error));
        Err(self.failed(error))
    }

    /// Count a failed call (its instance, trapped or abandoned, was
    /// dropped) and quarantine a plugin that keeps failing.
    fn failed(&self, error: CallError) -> CallError {
        let mut health = self.health();
        let limits = &self.limits;
        let text = error.to_string();
        let q = health.failed(
            &text,
            limits.max_consecutive_traps,
            limits.quarantine,
            Instant::now(),
        );
        if q.is_some() {
            self.stats.quarantined();
        }
        match q {
            Some(q) => {
                tracing::error!(plugin = %self.id, reason = %q.reason, retry_in_ms = q.backoff.as_millis() as u64, "plugin quarantined")
            }
            None => {
                tracing::warn!(plugin = %self.id, failures = health.failures(), error = %text, "plugin call failed; instance discarded")
            }
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
