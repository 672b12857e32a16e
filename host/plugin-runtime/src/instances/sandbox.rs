//! The sandbox of one plugin: effective capabilities (manifest request ∩
//! operator grant) and the WASI context built from them. By default a plugin
//! gets no filesystem, no network, no environment and no inherited stdio.
//!
//! A granted directory is opened once, at load, and every instance of the
//! plugin is given that same open directory (never the path again): a symlink
//! planted later where the path was cannot move the grant.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clawhost_config::{Access, EnvGrant, PluginGrants, ProcessGrant};
use clawhost_process_channel::ProcessSpec;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use crate::logs::{CapturedOutput, LogSource, PluginLogs};
use crate::manifest::RequestedCapabilities;
use crate::LoadError;

/// A directory a plugin actually gets.
#[derive(Debug, Clone)]
pub struct EffectiveDir {
    /// Path inside the plugin.
    pub guest_path: String,
    /// Canonical host directory, as it was when the grant was opened.
    pub host_path: PathBuf,
    /// The lesser of requested and granted access.
    pub access: Access,
    /// The directory, opened once at load.
    handle: Arc<cap_std::fs::Dir>,
}

/// The path that names an open directory itself (not whatever is at its old
/// path now).
fn fd_path(dir: &cap_std::fs::Dir) -> String {
    format!("/proc/self/fd/{}", dir.as_raw_fd())
}

/// Host paths no plugin may be granted: a grant that holds one (or lies
/// inside one) is refused.
#[derive(Debug, Clone, Default)]
pub struct ProtectedPaths {
    paths: Vec<(PathBuf, &'static str)>,
}

impl ProtectedPaths {
    /// Protect `path` (canonicalized when it exists), described as `what`.
    pub fn add(&mut self, path: &Path, what: &'static str) {
        self.paths.push((crate::owned_path::canonical(path), what));
    }

    fn conflict(&self, dir: &Path) -> Option<&(PathBuf, &'static str)> {
        self.paths
            .iter()
            .find(|(p, _)| crate::owned_path::overlap(p, dir))
    }
}

/// What a plugin actually gets.
#[derive(Debug, Clone, Default)]
pub struct EffectiveGrants {
    /// Mounted directories.
    pub dirs: Vec<EffectiveDir>,
    /// Environment variables (name, value).
    pub env: Vec<(String, String)>,
    /// Processes it may open, by name (API 0.2.2 `native-runtime`), shared
    /// with every instance.
    pub processes: Arc<BTreeMap<String, ProcessSpec>>,
    /// Operator grants not applied because the manifest does not ask for
    /// them, each said as a sentence for the operator.
    pub unasked: Vec<String>,
}

impl EffectiveGrants {
    /// What a plugin can see of its grants (each directory's guest path,
    /// host path and access; each variable's name and value) as text, to
    /// key what it declared by.
    pub(crate) fn fingerprint(&self) -> String {
        let mut text = String::new();
        for d in &self.dirs {
            text.push_str(&format!(
                "dir\0{}\0{}\0{:?}\0",
                d.guest_path,
                d.host_path.display(),
                d.access
            ));
        }
        for (name, value) in &self.env {
            text.push_str(&format!("env\0{name}\0{value}\0"));
        }
        for name in self.processes.keys() {
            text.push_str(&format!("process\0{name}\0"));
        }
        text
    }

    /// Intersect a manifest's request with the operator's grants. Host paths
    /// resolve against `base_dir`, must be existing directories, and may not
    /// hold or lie inside a `protected` path.
    pub fn resolve(
        id: &str,
        requested: &RequestedCapabilities,
        granted: &PluginGrants,
        base_dir: &Path,
        protected: &ProtectedPaths,
    ) -> Result<Self, LoadError> {
        let mut dirs = Vec::new();
        let mut unasked = Vec::new();
        for grant in &granted.filesystem {
            let Some(request) = requested
                .filesystem
                .iter()
                .find(|r| r.guest_path == grant.guest_path)
            else {
                unasked.push(format!(
                    "plugins.entries.{id}.grants.filesystem grants {}, which the manifest does not ask for (capabilities.filesystem): not mounted",
                    grant.guest_path
                ));
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
            // The one open of this directory: every instance reuses the
            // handle, and the checks below are about what was opened, not
            // about a path that could change in between.
            let handle = cap_std::fs::Dir::open_ambient_dir(&host, cap_std::ambient_authority())
                .map_err(|e| bad(format!("not an accessible directory: {e}")))?;
            let host = std::fs::read_link(fd_path(&handle))
                .map_err(|e| bad(format!("cannot name the opened directory: {e}")))?;
            if let Some((path, what)) = protected.conflict(&host) {
                return Err(bad(format!(
                    "it overlaps the {what} ({}); a plugin must never reach it",
                    path.display()
                )));
            }
            dirs.push(EffectiveDir {
                guest_path: grant.guest_path.clone(),
                host_path: host,
                access: request.access.min(grant.access),
                handle: Arc::new(handle),
            });
        }
        let mut env = Vec::new();
        for grant in &granted.env {
            if !requested.env.iter().any(|n| n == grant.name()) {
                unasked.push(format!(
                    "plugins.entries.{id}.grants.env grants ${}, which the manifest does not ask for (capabilities.env): not set",
                    grant.name()
                ));
                continue;
            }
            env.extend(grant.resolve());
        }
        let mut processes = BTreeMap::new();
        for (name, grant) in &granted.processes {
            if !requested.processes.iter().any(|n| n == name) {
                unasked.push(format!(
                    "plugins.entries.{id}.grants.processes grants `{name}`, which the manifest does not ask for (capabilities.processes): not startable"
                ));
                continue;
            }
            processes.insert(name.clone(), process_spec(grant, base_dir));
        }
        for line in &unasked {
            tracing::warn!(plugin = id, "{line}");
        }
        Ok(Self {
            dirs,
            env,
            processes: Arc::new(processes),
            unasked,
        })
    }

    /// A fresh WASI context with exactly these grants; stdio goes to `logs`.
    /// Directories are reopened through the handles taken at load
    /// (`/proc/self/fd/N` names the open directory itself, not a path).
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
            builder.preopened_dir(fd_path(&dir.handle), &dir.guest_path, perms)?;
        }
        Ok(builder.build())
    }
}

/// What starting a granted process means: a relative command holding a `/`
/// and a relative working directory resolve against `base_dir`; the
/// environment is the listed variables (the host's values for names, the
/// given ones for `{name, value}`), plus the host's `PATH` unless listed.
fn process_spec(grant: &ProcessGrant, base_dir: &Path) -> ProcessSpec {
    let mut env: BTreeMap<String, String> =
        grant.env.iter().filter_map(EnvGrant::resolve).collect();
    if !env.contains_key("PATH") {
        if let Ok(path) = std::env::var("PATH") {
            env.insert("PATH".into(), path);
        }
    }
    ProcessSpec {
        command: grant.program(base_dir).to_string_lossy().into_owned(),
        args: grant.args.clone(),
        env,
        cwd: grant.cwd.as_ref().map(|cwd| base_dir.join(cwd)),
    }
}
