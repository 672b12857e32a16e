//! What a plugin's calls cost and how they ended, since it loaded: the
//! counters `plugins list`, `/metrics` and `/v1/plugins` show.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::CallError;

/// Upper bounds of the call latency buckets, in seconds; the last, `f64::MAX`,
/// is Prometheus's `+Inf`.
pub const LATENCY_BUCKETS: [f64; 11] = [
    0.001,
    0.005,
    0.01,
    0.05,
    0.1,
    0.5,
    1.0,
    5.0,
    30.0,
    120.0,
    f64::MAX,
];

/// How a call ended, for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Answered (an oversized answer counts here too: the instance served).
    Served,
    /// Past its deadline.
    Timeout,
    /// Past its memory cap.
    Memory,
    /// A trap, or a component that could not be acquired.
    Trap,
    /// The host stopped a harness's turn.
    Stopped,
}

impl Ending {
    /// The ending of a failed call.
    pub(crate) fn of(error: &CallError) -> Self {
        match error {
            CallError::Timeout { .. } => Self::Timeout,
            CallError::MemoryLimit { .. } => Self::Memory,
            CallError::Stopped { .. } => Self::Stopped,
            CallError::OutputTooLarge { .. } | CallError::WrongAnswer { .. } => Self::Served,
            CallError::Trapped { .. }
            | CallError::Unloadable { .. }
            | CallError::Quarantined { .. } => Self::Trap,
        }
    }
}

/// The live counters of one plugin.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    served: AtomicU64,
    timeouts: AtomicU64,
    memory: AtomicU64,
    traps: AtomicU64,
    stopped: AtomicU64,
    cancelled: AtomicU64,
    refused: AtomicU64,
    quarantines: AtomicU64,
    buckets: [AtomicU64; LATENCY_BUCKETS.len()],
    latency_micros: AtomicU64,
    memory_high_water: AtomicU64,
}

/// A call being timed: counted as cancelled if dropped unfinished.
pub(crate) struct Timing<'a> {
    stats: &'a Stats,
    started: Instant,
    done: bool,
}

impl Drop for Timing<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.stats.cancelled.fetch_add(1, Ordering::Relaxed);
            self.record_latency();
        }
    }
}

impl Timing<'_> {
    fn record_latency(&self) {
        let elapsed = self.started.elapsed();
        let seconds = elapsed.as_secs_f64();
        if let Some(i) = LATENCY_BUCKETS.iter().position(|b| seconds <= *b) {
            self.stats.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.stats
            .latency_micros
            .fetch_add(micros, Ordering::Relaxed);
    }

    /// The call ended so.
    pub(crate) fn finish(mut self, ending: Ending) {
        self.done = true;
        self.record_latency();
        let counter = match ending {
            Ending::Served => &self.stats.served,
            Ending::Timeout => &self.stats.timeouts,
            Ending::Memory => &self.stats.memory,
            Ending::Trap => &self.stats.traps,
            Ending::Stopped => &self.stats.stopped,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

impl Stats {
    /// Start timing a call.
    pub(crate) fn begin(&self) -> Timing<'_> {
        Timing {
            stats: self,
            started: Instant::now(),
            done: false,
        }
    }

    /// A call refused without running (the plugin is quarantined).
    pub(crate) fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// A quarantine started or was renewed.
    pub(crate) fn quarantined(&self) {
        self.quarantines.fetch_add(1, Ordering::Relaxed);
    }

    /// An instance held `bytes` of memory.
    pub(crate) fn memory_used(&self, bytes: usize) {
        self.memory_high_water
            .fetch_max(bytes as u64, Ordering::Relaxed);
    }

    /// The counters now.
    pub(crate) fn snapshot(&self) -> PluginStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut cumulative = 0;
        let buckets = LATENCY_BUCKETS
            .iter()
            .zip(&self.buckets)
            .map(|(bound, n)| {
                cumulative += get(n);
                (*bound, cumulative)
            })
            .collect();
        let failures = CallFailures {
            timeout: get(&self.timeouts),
            memory: get(&self.memory),
            trap: get(&self.traps),
            stopped: get(&self.stopped),
        };
        let served = get(&self.served);
        let cancelled = get(&self.cancelled);
        PluginStats {
            calls: served + cancelled + failures.total(),
            served,
            cancelled,
            refused: get(&self.refused),
            quarantines: get(&self.quarantines),
            failures,
            latency_buckets: buckets,
            latency_seconds: get(&self.latency_micros) as f64 / 1e6,
            memory_high_water_bytes: get(&self.memory_high_water),
        }
    }
}

/// Failed calls by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallFailures {
    /// Past the deadline.
    pub timeout: u64,
    /// Past the memory cap.
    pub memory: u64,
    /// Traps (and components that could not be acquired).
    pub trap: u64,
    /// Harness turns the host stopped (not counted against the plugin).
    pub stopped: u64,
}

impl CallFailures {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.timeout + self.memory + self.trap + self.stopped
    }

    /// Each kind with its name, as `/metrics` labels them.
    pub fn by_kind(&self) -> [(&'static str, u64); 4] {
        [
            ("timeout", self.timeout),
            ("memory", self.memory),
            ("trap", self.trap),
            ("stopped", self.stopped),
        ]
    }
}

/// A plugin's counters since it loaded.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginStats {
    /// Calls that ran (served, failed or cancelled).
    pub calls: u64,
    /// Calls answered.
    pub served: u64,
    /// Calls whose caller gave up (not the plugin's failure).
    pub cancelled: u64,
    /// Calls refused while the plugin was quarantined.
    pub refused: u64,
    /// Quarantines started or renewed.
    pub quarantines: u64,
    /// Failed calls by kind.
    pub failures: CallFailures,
    /// Calls that took at most each bound (seconds), cumulative.
    #[serde(skip)]
    pub latency_buckets: Vec<(f64, u64)>,
    /// The time all calls took together, in seconds.
    pub latency_seconds: f64,
    /// The most memory an instance held at the end of a call, in bytes.
    pub memory_high_water_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_latency_and_cancellation_are_counted() {
        let stats = Stats::default();
        stats.begin().finish(Ending::Served);
        stats.begin().finish(Ending::Timeout);
        drop(stats.begin());
        stats.refused();
        stats.memory_used(10);
        stats.memory_used(4);
        let s = stats.snapshot();
        assert_eq!((s.calls, s.served, s.cancelled, s.refused), (3, 1, 1, 1));
        assert_eq!(s.failures.timeout, 1);
        assert_eq!(s.memory_high_water_bytes, 10);
        assert_eq!(
            s.latency_buckets.last().unwrap().1,
            3,
            "every call is in a bucket"
        );
    }
}
