//! A plugin's health: failed calls in a row, and the quarantine that follows
//! too many of them. A quarantined plugin's calls are refused until its
//! backoff passes; the next call is then a trial: served, the plugin is
//! healthy again; failed, the backoff doubles (up to [`MAX_BACKOFF`]).
//! A cancelled call is none of the plugin's doing and is not counted.

use std::time::{Duration, Instant};

/// The longest a quarantine lasts before the next trial call.
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);

/// A quarantine in force (or passed, awaiting its trial call).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quarantine {
    /// Why: the failures, the last one quoted.
    pub reason: String,
    /// When the next call is let through as a trial.
    pub until: Instant,
    /// This quarantine's length; a failed trial doubles it.
    pub backoff: Duration,
}

/// Failures in a row and the quarantine they led to, if any.
#[derive(Debug, Default)]
pub(crate) struct Health {
    failures: u32,
    quarantine: Option<Quarantine>,
}

impl Health {
    /// Failed calls in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The quarantine, if the plugin is in one.
    pub fn quarantine(&self) -> Option<&Quarantine> {
        self.quarantine.as_ref()
    }

    /// The quarantine still in force at `now`, if any (a passed one lets the
    /// call through as a trial).
    pub fn refusing(&self, now: Instant) -> Option<&Quarantine> {
        self.quarantine.as_ref().filter(|q| now < q.until)
    }

    /// A call was served: the plugin is healthy. Says whether this ended a
    /// quarantine.
    pub fn served(&mut self) -> bool {
        self.failures = 0;
        self.quarantine.take().is_some()
    }

    /// A call failed with `error`: count it, and quarantine the plugin after
    /// `max` in a row (for `first`, doubled after each failed trial).
    /// Returns the quarantine when this failure started or renewed one.
    pub fn failed(
        &mut self,
        error: &str,
        max: u32,
        first: Duration,
        now: Instant,
    ) -> Option<&Quarantine> {
        self.failures = self.failures.saturating_add(1);
        let backoff = match &self.quarantine {
            Some(q) => (q.backoff * 2).min(MAX_BACKOFF),
            None if self.failures >= max => first.min(MAX_BACKOFF),
            None => return None,
        };
        self.quarantine = Some(Quarantine {
            reason: format!("{} failed calls in a row, the last: {error}", self.failures),
            until: now + backoff,
            backoff,
        });
        self.quarantine.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: Duration = Duration::from_secs(10);

    #[test]
    fn quarantine_starts_at_the_limit_doubles_on_failed_trials_and_ends_when_served() {
        let t0 = Instant::now();
        let mut h = Health::default();
        assert!(h.failed("a", 3, FIRST, t0).is_none());
        assert!(h.failed("b", 3, FIRST, t0).is_none());
        let q = h.failed("c", 3, FIRST, t0).cloned().unwrap();
        assert_eq!((q.backoff, q.until), (FIRST, t0 + FIRST));
        assert!(q.reason.starts_with("3 failed calls in a row, the last: c"));
        assert!(h.refusing(t0 + Duration::from_secs(9)).is_some());
        // The backoff passed: the next call is a trial; it fails.
        let t1 = t0 + FIRST;
        assert!(h.refusing(t1).is_none());
        let q = h.failed("d", 3, FIRST, t1).cloned().unwrap();
        assert_eq!(q.backoff, 2 * FIRST);
        assert!(h.refusing(t1 + FIRST).is_some());
        // A served trial ends it and the count starts over.
        assert!(h.served());
        assert_eq!((h.failures(), h.quarantine()), (0, None));
        assert!(h.failed("e", 3, FIRST, t1).is_none());
    }

    #[test]
    fn the_backoff_stops_growing_at_ten_minutes() {
        let now = Instant::now();
        let mut h = Health::default();
        for _ in 0..20 {
            h.failed("x", 1, FIRST, now);
        }
        assert_eq!(h.quarantine().unwrap().backoff, MAX_BACKOFF);
    }
}
