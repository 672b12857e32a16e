//! Typed errors of plugin loading and plugin calls.

use std::path::PathBuf;

use crate::abi::{MAX_API, MIN_API};
use crate::api_version::API_PACKAGE;

/// Why a plugin was not loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The manifest is missing or invalid.
    #[error("plugin manifest {path}: {reason}")]
    Manifest {
        /// Manifest path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A signature is required and the plugin's does not hold (see
    /// "Plugins from registries").
    #[error("plugin `{id}` refused: its signature does not hold: {reason}")]
    Signature {
        /// Plugin id.
        id: String,
        /// Why.
        reason: String,
    },
    /// The operator's rules refuse the plugin.
    #[error("plugin `{id}` refused: {rule}")]
    Refused {
        /// Plugin id.
        id: String,
        /// The rule that refused it.
        rule: String,
    },
    /// Built against a plugin API this host does not speak.
    #[error("plugin `{id}` targets an unsupported plugin API ({found}); this host serves {API_PACKAGE} {MIN_API} (oldest) to {MAX_API} (newest): rebuild it against clawhost-sdk {MAX_API}")]
    ApiVersion {
        /// Plugin id.
        id: String,
        /// What was found.
        found: String,
    },
    /// The component is not a clawhost plugin.
    #[error("plugin `{id}` is not a clawhost plugin: {reason}")]
    NotAPlugin {
        /// Plugin id.
        id: String,
        /// Why.
        reason: String,
    },
    /// The component imports an interface this host does not provide (found
    /// before it is compiled, or in a component from the compiled cache).
    #[error("plugin `{id}` imports `{import}`, which this host does not provide to plugins{}", fix_hint(.import))]
    UnsupportedImport {
        /// Plugin id.
        id: String,
        /// The import's name.
        import: String,
    },
    /// A grant the operator configured cannot be honoured.
    #[error("plugin `{id}`: grant {what} cannot be honoured: {reason}")]
    Grant {
        /// Plugin id.
        id: String,
        /// The grant.
        what: String,
        /// Why.
        reason: String,
    },
    /// Reading, compiling or instantiating failed.
    #[error("plugin `{id}`: {stage} failed: {reason}")]
    Runtime {
        /// Plugin id.
        id: String,
        /// Which step.
        stage: &'static str,
        /// The error, with its causes.
        reason: String,
    },
    /// A host setting is unsafe or unusable (e.g. the component cache).
    #[error("`{key}`: {reason}")]
    HostSetup {
        /// The setting, as a dotted config key.
        key: String,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// The operator's `plugins.entries.<id>.config` does not fit the
    /// manifest's `configSchema` (or that schema is not valid JSON Schema).
    #[error("plugin `{id}`: {key}: {reason}")]
    Config {
        /// Plugin id.
        id: String,
        /// The offending key, dotted from `plugins.entries.<id>.config`.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// `register` returned something invalid.
    #[error("plugin `{id}` registered invalid data: {reason}")]
    Registration {
        /// Plugin id.
        id: String,
        /// What is wrong.
        reason: String,
    },
}

impl LoadError {
    /// The plugin id the error is about, when known.
    pub fn plugin_id(&self) -> Option<&str> {
        match self {
            LoadError::Manifest { .. } | LoadError::HostSetup { .. } => None,
            LoadError::Refused { id, .. }
            | LoadError::Signature { id, .. }
            | LoadError::ApiVersion { id, .. }
            | LoadError::NotAPlugin { id, .. }
            | LoadError::UnsupportedImport { id, .. }
            | LoadError::Grant { id, .. }
            | LoadError::Runtime { id, .. }
            | LoadError::Config { id, .. }
            | LoadError::Registration { id, .. } => Some(id),
        }
    }
}

/// Why a call into a plugin failed (as opposed to the plugin returning an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The call ran past its wall-clock deadline and was stopped.
    #[error("plugin `{id}` exceeded its {timeout_ms} ms deadline and was stopped")]
    Timeout {
        /// Plugin id.
        id: String,
        /// The deadline.
        timeout_ms: u64,
    },
    /// The instance tried to grow its memory past the cap.
    #[error("plugin `{id}` exceeded its memory limit of {limit_mb} MiB and was stopped")]
    MemoryLimit {
        /// Plugin id.
        id: String,
        /// The cap.
        limit_mb: u64,
    },
    /// The instance trapped (panic, unreachable, bad access …).
    #[error("plugin `{id}` trapped: {reason}")]
    Trapped {
        /// Plugin id.
        id: String,
        /// The trap.
        reason: String,
    },
    /// The call answered more text than `plugins.limits.maxOutputKb` allows.
    #[error("plugin `{id}` returned a {what} of {bytes} bytes, over the {limit_kb} KiB output limit (plugins.limits.maxOutputKb); it was discarded")]
    OutputTooLarge {
        /// Plugin id.
        id: String,
        /// What was too large.
        what: &'static str,
        /// Its size.
        bytes: usize,
        /// The cap.
        limit_kb: usize,
    },
    /// Its component, deferred at load, could not be acquired at first use
    /// (its file changed, or the compile failed).
    #[error("plugin `{id}` could not be loaded: {reason}")]
    Unloadable {
        /// Plugin id.
        id: String,
        /// Why.
        reason: String,
    },
    /// The host stopped a harness's turn (it called on after its tool
    /// budget was spent); not counted as the plugin's failure.
    #[error("plugin `{id}`: {reason}")]
    Stopped {
        /// Plugin id.
        id: String,
        /// Why.
        reason: String,
    },
    /// The version bindings answered a request with the answer of another
    /// kind of request (a host defect, reported instead of a panic).
    #[error(
        "plugin `{id}`: its API bindings answered a {asked} request with another kind of answer"
    )]
    WrongAnswer {
        /// Plugin id.
        id: String,
        /// The request asked (`register`, `call-tool`, `hook`, …).
        asked: &'static str,
    },
    /// The plugin is quarantined after failed calls in a row: calls are
    /// refused until its backoff passes (see `plugins.limits.quarantineMs`).
    #[error(
        "plugin `{id}` is quarantined ({reason}); the next call is let through in {retry_in_ms} ms"
    )]
    Quarantined {
        /// Plugin id.
        id: String,
        /// Why.
        reason: String,
        /// Time left before a call is let through again, in ms.
        retry_in_ms: u64,
    },
}

/// How to build without an import the host refuses, when there is a known way.
fn fix_hint(import: &str) -> &'static str {
    if import.starts_with("wasi:http/") {
        ": componentize-js's default StarlingMonkey build imports wasi:http; build with `clawhost-js build` (the QuickJS backend) or pass `--disable http fetch-event` to `jco componentize`"
    } else if import.starts_with("wasi:") {
        ": this host links WASI 0.2's cli, clocks, filesystem, io, random and sockets only"
    } else {
        ""
    }
}
