//! Plugin manifests (`openclaw.plugin.json`): identity and requested capabilities.

use std::path::{Path, PathBuf};

use clawhost_config::Access;
use serde::Deserialize;

use crate::owned_path::{plain_path_under, plain_stamp_under, read_stamped, stamp, FileStamp};
use crate::LoadError;

/// The file name of a plugin manifest inside a plugin package directory.
pub const MANIFEST_FILE: &str = "openclaw.plugin.json";

/// A plugin package's manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginManifest {
    /// Plugin id (`[a-z0-9][a-z0-9_-]*`), the key for allowlists and grants.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Plugin version.
    pub version: String,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// The plugin API version it was built against (e.g. `0.1.0`).
    pub api_version: String,
    /// The component file, relative to the manifest.
    pub component: PathBuf,
    /// Capabilities it asks for; it gets at most these, and only what the operator grants.
    #[serde(default)]
    pub capabilities: RequestedCapabilities,
    /// JSON Schema of `plugins.entries.<id>.config` (OpenClaw's
    /// `configSchema`); the operator's config is checked against it at load.
    #[serde(default)]
    pub config_schema: Option<serde_json::Value>,
    /// Hints for config UIs (OpenClaw's `uiHints`); kept, not interpreted.
    #[serde(default)]
    pub ui_hints: Option<serde_json::Value>,
}

/// Capabilities a plugin asks for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestedCapabilities {
    /// Directories it wants to see, by guest path.
    #[serde(default)]
    pub filesystem: Vec<RequestedDir>,
    /// Environment variable names it wants to read.
    #[serde(default)]
    pub env: Vec<String>,
    /// Whether it wants to act as an agent runtime (model and tool calls).
    #[serde(default)]
    pub harness: bool,
    /// Names of operator-configured processes it wants to open
    /// (`grants.processes`; API 0.2.2 `native-runtime`, harnesses only).
    #[serde(default)]
    pub processes: Vec<String>,
}

/// A directory a plugin asks to see.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestedDir {
    /// Path as the plugin sees it.
    pub guest_path: String,
    /// Most access it wants.
    #[serde(default)]
    pub access: Access,
}

/// A manifest with the directory it was read from.
#[derive(Debug, Clone)]
pub struct PluginPackage {
    /// The manifest.
    pub manifest: PluginManifest,
    /// The package directory.
    pub dir: PathBuf,
}

/// Largest manifest read.
const MAX_MANIFEST: u64 = 1 << 20;

impl PluginPackage {
    /// Read and check `dir/openclaw.plugin.json`.
    pub fn read(dir: &Path) -> Result<Self, LoadError> {
        let path = dir.join(MANIFEST_FILE);
        let bytes = crate::owned_path::read_bounded(&path, MAX_MANIFEST).map_err(|e| {
            LoadError::Manifest {
                path: path.clone(),
                reason: e.to_string(),
            }
        })?;
        Self::parse(dir, path, &bytes)
    }

    /// [`Self::read`], or `None` when `dir` holds no manifest (or is not
    /// a directory): it is not a package.
    pub(crate) fn read_if_present(dir: &Path) -> Result<Option<Self>, LoadError> {
        use std::io::ErrorKind::{NotADirectory, NotFound};
        let path = dir.join(MANIFEST_FILE);
        match crate::owned_path::read_bounded(&path, MAX_MANIFEST) {
            Ok(bytes) => Self::parse(dir, path, &bytes).map(Some),
            Err(e) if matches!(e.kind(), NotFound | NotADirectory) => Ok(None),
            Err(e) => Err(LoadError::Manifest {
                path,
                reason: e.to_string(),
            }),
        }
    }

    /// Check the manifest `bytes` read from `path` in `dir`.
    fn parse(dir: &Path, path: PathBuf, bytes: &[u8]) -> Result<Self, LoadError> {
        let text = std::str::from_utf8(bytes).map_err(|e| LoadError::Manifest {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let manifest: PluginManifest =
            serde_json::from_str(text).map_err(|e| LoadError::Manifest {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        let id_ok = manifest
            .id
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && manifest.id.len() <= 64
            && manifest
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !id_ok {
            return Err(LoadError::Manifest {
                path,
                reason: format!(
                    "plugin id `{}` is invalid: use 1–64 characters of [a-z0-9_-], starting with a letter or digit",
                    manifest.id
                ),
            });
        }
        let component = &manifest.component;
        let inside = !component.as_os_str().is_empty()
            && component
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside {
            return Err(LoadError::Manifest {
                path,
                reason: format!(
                    "component `{}` must be a relative path inside the package (no `..`, no absolute path)",
                    component.display()
                ),
            });
        }
        for dir in &manifest.capabilities.filesystem {
            if !dir.guest_path.starts_with('/') {
                return Err(LoadError::Manifest {
                    path,
                    reason: format!("filesystem guestPath `{}` must be absolute", dir.guest_path),
                });
            }
        }
        Ok(Self {
            manifest,
            dir: dir.to_path_buf(),
        })
    }

    /// Path of the component file.
    pub fn component_path(&self) -> PathBuf {
        self.dir.join(&self.manifest.component)
    }

    /// Read the component file: it must resolve inside the package (a
    /// symlink out of it is refused), be a regular file and hold at most
    /// `max` bytes. Nothing else is opened, so a FIFO or device never blocks.
    /// The stamp is there when the file did not change while it was read.
    pub fn read_component(
        &self,
        max: u64,
    ) -> Result<(Vec<u8>, Option<FileStamp>), ComponentFileError> {
        let real = self.real_component_path()?;
        read_stamped(&real, max).map_err(|e| ComponentFileError::io(self.component_path(), e))
    }

    /// The component file's canonical path and stamp, under the same rules
    /// as [`Self::read_component`], without reading it.
    /// `real_dir` is the package directory's canonical path, when the
    /// caller knows it.
    pub fn stamp_component(
        &self,
        max: u64,
        real_dir: Option<&Path>,
    ) -> Result<(PathBuf, FileStamp), ComponentFileError> {
        let shown = |e: std::io::Error| ComponentFileError::io(self.component_path(), e);
        // A plain path's `lstat`s give the stamp; otherwise resolve and open.
        if let Some(stamped) = real_dir
            .and_then(|dir| plain_stamp_under(dir, Path::new(&self.manifest.component), max))
        {
            return stamped.map_err(shown);
        }
        let real = self.real_component_path_in(real_dir)?;
        let stamp = stamp(&real, max).map_err(shown)?;
        Ok((real, stamp))
    }

    /// The component file's canonical path, which must be inside the package.
    fn real_component_path(&self) -> Result<PathBuf, ComponentFileError> {
        self.real_component_path_in(None)
    }

    /// [`Self::real_component_path`], given the package directory's
    /// canonical path (else it is resolved here).
    fn real_component_path_in(
        &self,
        real_dir: Option<&Path>,
    ) -> Result<PathBuf, ComponentFileError> {
        let path = self.component_path();
        let package = match real_dir {
            Some(dir) => dir.to_path_buf(),
            None => self
                .dir
                .canonicalize()
                .map_err(|e| ComponentFileError::io(self.dir.clone(), e))?,
        };
        if let Some(real) = plain_path_under(&package, Path::new(&self.manifest.component)) {
            return Ok(real);
        }
        let real = path
            .canonicalize()
            .map_err(|e| ComponentFileError::io(path.clone(), e))?;
        if !real.starts_with(&package) {
            return Err(ComponentFileError::OutsidePackage { path, real });
        }
        Ok(real)
    }
}

/// Plugin package directories under `path`: `path` itself when it holds a
/// manifest, else each immediate subdirectory that does (sorted). Hidden
/// subdirectories (`.name`, such as a package `plugins install` is still
/// staging) are not packages.
pub fn discover(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    Ok(match candidates(path)? {
        Candidates::Package(dir) => vec![dir],
        Candidates::Subdirectories(dirs) => dirs
            .into_iter()
            .filter(|p| p.join(MANIFEST_FILE).is_file())
            .collect(),
    })
}

/// Where [`discover`] looks for packages under a path.
pub(crate) enum Candidates {
    /// The path itself holds a manifest.
    Package(PathBuf),
    /// Its immediate subdirectories (and symlinks), not hidden, sorted, by
    /// their directory entries alone: which of them hold a manifest is
    /// found when it is read.
    Subdirectories(Vec<PathBuf>),
}

/// The [`Candidates`] under `path` (one `stat`, then one listing).
pub(crate) fn candidates(path: &Path) -> std::io::Result<Candidates> {
    if path.join(MANIFEST_FILE).is_file() {
        return Ok(Candidates::Package(path.to_path_buf()));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        // The entry's type, from the listing: a file is not a package.
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(Candidates::Subdirectories(dirs))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_relative_path_is_plain_only_when_no_part_is_a_symlink_or_a_dot() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("sub")).unwrap();
        std::fs::write(base.join("sub").join("plugin.wasm"), b"x").unwrap();
        std::os::unix::fs::symlink(base.join("sub"), base.join("link")).unwrap();
        let plain =
            |rel: &str| crate::owned_path::plain_path_under(&base, std::path::Path::new(rel));
        assert_eq!(
            plain("sub/plugin.wasm"),
            Some(base.join("sub").join("plugin.wasm"))
        );
        // A symlinked directory, a missing file, `.` and `..` are resolved in full.
        assert_eq!(plain("link/plugin.wasm"), None);
        assert_eq!(plain("sub/missing.wasm"), None);
        assert_eq!(plain("./sub/plugin.wasm"), None);
        assert_eq!(plain("sub/../sub/plugin.wasm"), None);
    }

    #[test]
    fn hidden_subdirectories_are_not_packages() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", ".staging-a"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join(super::MANIFEST_FILE), "{}").unwrap();
        }
        assert_eq!(
            super::discover(dir.path()).unwrap(),
            vec![dir.path().join("a")]
        );
    }
}

/// Why a package's component file cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ComponentFileError {
    /// It could not be resolved, stamped or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path as the manifest names it.
        path: PathBuf,
        /// The I/O error (shared: the error is kept with the package's files).
        source: std::sync::Arc<std::io::Error>,
    },
    /// It resolves outside its package (a symlink out of it).
    #[error("{} resolves to {}, outside the package", path.display(), real.display())]
    OutsidePackage {
        /// The path as the manifest names it.
        path: PathBuf,
        /// Where it resolves.
        real: PathBuf,
    },
    /// Its bytes changed while the host was loading it.
    #[error("the component file changed while it was loading")]
    Changed,
}

impl ComponentFileError {
    fn io(path: PathBuf, source: std::io::Error) -> Self {
        Self::Io {
            path,
            source: std::sync::Arc::new(source),
        }
    }
}
