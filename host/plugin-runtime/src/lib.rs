//! Sandboxed WebAssembly plugin runtime.
//!
//! A plugin is a component implementing `openclaw:plugin/plugin` (see `wit/`).
//! Loading goes: manifest → operator allow/deny lists → API version →
//! sha256 pin → grants (manifest ∩ operator) → compile (cached on disk) →
//! import/export check → link → instantiate → `register`. Every call runs
//! under a memory cap and a wall-clock deadline (epoch interruption); a
//! trapped instance is discarded and re-created for the next call, and a
//! plugin that fails repeatedly is disabled.

mod admission;
mod api_version;
mod bindings;
mod cache;
mod convert;
mod engine;
mod error;
mod host;
mod instance;
mod logs;
mod manifest;
mod owned_path;
mod plugin;
mod sandbox;
mod state;
mod turn_convert;

pub use admission::sha256_hex;
pub use api_version::{API_PACKAGE, API_VERSION};
pub use cache::{CacheError, CacheOutcome, ComponentCache};
pub use convert::Registration;
pub use error::{CallError, LoadError};
pub use host::{LoadReport, PluginHost};
pub use logs::{LogLevel, LogLine, LogSource};
pub use manifest::{PluginManifest, RequestedCapabilities, RequestedDir, MANIFEST_FILE};
pub use owned_path::OwnedPathError;
pub use plugin::{LoadedPlugin, PluginState, PluginStatus};
pub use sandbox::{EffectiveDir, EffectiveGrants, ProtectedPaths};
