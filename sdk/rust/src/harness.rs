//! Agent runtimes (harnesses): the [`Harness`] trait and its export glue.

use std::marker::PhantomData;

use crate::adapter::with_state;
use crate::bindings::harness::exports::openclaw::plugin::harness as hx;
use crate::{AttemptError, PreparedTurn, Route, Support, Turn};

/// An agent runtime. Its model calls and tool calls go through the [`Turn`]
/// the host hands to [`Harness::run_attempt`], which exists only while the
/// turn runs. One value is created (with `Default`) when the instance starts.
pub trait Harness: Default + 'static {
    /// The runtime id (lowercase letters, digits, `-`, `_`; not a built-in id).
    fn id(&self) -> String;

    /// Whether this harness can run turns on `route`.
    fn supports(&self, route: Route) -> Support;

    /// Run one turn; `Ok` is the final answer. Pass a model error on with
    /// `?` (it converts into [`AttemptError::Model`]) so the host can act on it.
    fn run_attempt(&self, turn: &Turn, prepared: PreparedTurn) -> Result<String, AttemptError>;

    /// Forget any state kept for a session.
    fn reset(&self, _session_id: &str) {}

    /// The harness is being unloaded.
    fn dispose(&self) {}
}

/// Adapts a [`Harness`] to the exported WIT interface; used by [`crate::export_harness!`].
pub struct HarnessAdapter<H>(PhantomData<H>);

fn with<H: Harness, R>(f: impl FnOnce(&H) -> R) -> R {
    with_state(|h: H| h, f)
}

impl<H: Harness> hx::Guest for HarnessAdapter<H> {
    fn id() -> String {
        with::<H, _>(|h| h.id())
    }

    fn supports(route: Route) -> Support {
        with::<H, _>(|h| h.supports(route))
    }

    fn run_attempt(turn: &Turn, prepared: PreparedTurn) -> Result<String, AttemptError> {
        with::<H, _>(|h| h.run_attempt(turn, prepared))
    }

    fn reset(session_id: String) {
        with::<H, _>(|h| h.reset(&session_id))
    }

    fn dispose() {
        with::<H, _>(|h| h.dispose())
    }
}
