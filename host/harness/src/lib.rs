//! Harnesses (agent runtimes): the registry and the selection policy that
//! decides which runtime runs a session's turns.

mod registry;
mod runtime_id;
mod selection;

pub use registry::{HarnessIdError, HarnessRegistry};
pub use runtime_id::{normalize, RuntimeId, BUILTIN};
pub use selection::{
    codex_eligible, select, PolicyScopes, Reason, Selection, SelectionError, SelectionRequest,
};

#[cfg(test)]
mod selection_tests;
