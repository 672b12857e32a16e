//! Instances: the wasmtime engine, the sandbox (grants, WASI context),
//! per-plugin state and limits, call deadlines, health (quarantine) and the
//! call statistics.

pub(crate) mod engine;
pub(crate) mod health;
pub(crate) mod instance;
pub(crate) mod sandbox;
pub(crate) mod state;
pub(crate) mod stats;
