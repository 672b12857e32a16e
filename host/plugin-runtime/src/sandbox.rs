//! The sandbox of one plugin: effective capabilities (manifest request ∩
//! operator grant) and the WASI context built from them. By default a plugin
//! gets no filesystem, no network, no environment and no inherited stdio.

use std::path::PathBuf;
use std::sync::Arc;

use clawhost_config::{Access, EnvGrant, PluginGrants};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use crate::logs::{CapturedOutput, LogSource, PluginLogs};
use crate::manifest::RequestedCapabilities;
use crate::LoadError;

/// A directory a plugin actually gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveDir {
    /// Path inside the plugin.
    pub guest_path: String,
    /// Canonical host directory.
    pub host_path: PathBuf,
    /// The lesser of requested and granted access.
    pub access: Access,
}

/// What a plugin actually gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EffectiveGrants {
    /// Mounted directories.
    pub dirs: Vec<EffectiveDir>,
    /// Environment variables (name, value).
    pub env: Vec<(String, String)>,
}

impl EffectiveGrants {
    /// Intersect a manifest's request with the operator's grants. Host paths
    /// resolve against `base_dir` and must be existing directories.
    pub fn resolve(
        id: &str,
        requested: &RequestedCapabilities,
        granted: &PluginGrants,
        base_dir: &std::path::Path,
    ) -> Result<Self, LoadError> {
        let mut dirs = Vec::new();
        for grant in &granted.filesystem {
            let Some(request) = requested
                .filesystem
                .iter()
                .find(|r| r.guest_path == grant.guest_path)
            else {
                tracing::info!(plugin = id, guest_path = %grant.guest_path, "operator grant not requested by the manifest; not mounted");
                continue;
            };
            let host = if grant.host_path.is_absolute() {
                grant.host_path.clone()
            } else {
                base_dir.join(&grant.host_path)
            };
            let bad = |reason: String| LoadError::Grant {
                id: id.into(),
                what: format!("{} → {}", grant.guest_path, host.display()),
                reason,
            };
            let host = host.canonicalize().map_err(|e| bad(e.to_string()))?;
            // Opening through cap-std checks it is a directory we can hold a handle to.
            cap_std::fs::Dir::open_ambient_dir(&host, cap_std::ambient_authority())
                .map_err(|e| bad(format!("not an accessible directory: {e}")))?;
            dirs.push(EffectiveDir {
                guest_path: grant.guest_path.clone(),
                host_path: host,
                access: request.access.min(grant.access),
            });
        }
        let mut env = Vec::new();
        for grant in &granted.env {
            if !requested.env.iter().any(|n| n == grant.name()) {
                continue;
            }
            match grant {
                EnvGrant::Inherit(name) => {
                    if let Ok(value) = std::env::var(name) {
                        env.push((name.clone(), value));
                    }
                }
                EnvGrant::Fixed { name, value } => env.push((name.clone(), value.clone())),
            }
        }
        Ok(Self { dirs, env })
    }

    /// A fresh WASI context with exactly these grants; stdio goes to `logs`.
    pub fn wasi_ctx(&self, logs: &Arc<PluginLogs>) -> wasmtime::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdout(CapturedOutput::new(logs.clone(), LogSource::Stdout))
            .stderr(CapturedOutput::new(logs.clone(), LogSource::Stderr))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }))
            .envs(&self.env);
        for dir in &self.dirs {
            let perms = match dir.access {
                Access::ReadOnly => FsPerms::ReadOnly,
                Access::ReadWrite => FsPerms::ReadWrite,
            };
            builder.preopened_dir(&dir.host_path, &dir.guest_path, perms)?;
        }
        Ok(builder.build())
    }
}
