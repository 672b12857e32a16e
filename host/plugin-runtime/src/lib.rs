//! Sandboxed WebAssembly plugin runtime.
//!
//! A plugin is a component exporting interfaces of one `openclaw:plugin`
//! API version (see `wit/v*`; every released version is still served, see
//! `abi`). Loading goes: manifest → operator allow/deny lists → API version →
//! sha256 pin → grants (manifest ∩ operator) → compile (cached on disk) →
//! export/import check → link → instantiate → registration; a warm start
//! takes the registration and the checked imports and exports from an
//! authenticated record and leaves loading the component, linking and
//! instantiating to the first call. Every call runs
//! under a memory cap and a wall-clock deadline (epoch interruption); a
//! trapped instance is discarded and re-created for the next call, and a
//! plugin that fails repeatedly is disabled.

// One room per job: packages (discovery, manifests, admission, pins),
// the compiled-component cache, the per-version ABI bindings, instances
// (engine, sandbox, limits, deadlines) and plugin logs; `host` and `plugin`
// put them together.
mod abi;
mod cache;
mod error;
mod host;
mod instances;
mod logs;
mod owned_path;
mod packages;
mod plugin;

// The rooms' modules by their short names.
use abi::api_version;
use cache::source as component_source;
use instances::{engine, health, instance, sandbox, state, stats};
use packages::{admission, manifest, package_files, registration, signed};

pub use abi::{ApiVersion, MAX_API, MIN_API};
pub use admission::sha256_hex;
pub use api_version::{API_PACKAGE, CURRENT_API};
pub use cache::{CacheError, CacheOutcome, ComponentCache, Evicted, FunctionCache};
pub use error::{CallError, LoadError};
pub use host::{LoadReport, PluginHost};
pub use logs::{LogLevel, LogLine, LogSource};
pub use manifest::{
    discover, ComponentFileError, PluginManifest, PluginPackage, RequestedCapabilities,
    RequestedDir, MANIFEST_FILE,
};
pub use owned_path::OwnedPathError;
pub use plugin::{Declaration, Interfaces, LoadedPlugin, PluginState, PluginStatus};
pub use registration::Registration;
pub use sandbox::{EffectiveDir, EffectiveGrants, ProtectedPaths};
pub use signed::{trusted_keys, verify_record, SignatureRecord, SignedBy, SIGNATURE_FILE};
pub use stats::{CallFailures, PluginStats, LATENCY_BUCKETS};
