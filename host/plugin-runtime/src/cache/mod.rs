//! On-disk cache of compiled components, keyed by the component's sha256 and
//! the engine's compatibility hash, so start-up does not recompile.
//!
//! A cached artifact is native code: wasmtime's `deserialize` trusts it
//! blindly. So every artifact is authenticated with keyed BLAKE3 under a key
//! kept outside the cache dir, over the source component's sha256, the engine
//! key and the artifact bytes ([`artifact`]). An artifact is mapped from its
//! file, not read: once its tag has verified, a record of its file stamp
//! (authenticated too) lets the next start skip re-reading 35 MB, the way a
//! component's digest is remembered ([`packages`]). A missing, foreign or
//! tampered artifact is recompiled and rewritten, never loaded.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::Engine;

use crate::owned_path::{self, OwnedPathError};

pub use functions::FunctionCache;

/// Tag length (keyed BLAKE3, for artifacts and package records).
const TAG_LEN: usize = 32;
/// Key length.
const KEY_LEN: usize = 32;

/// A directory of serialized components, authenticated by a key.
pub struct ComponentCache {
    /// The directory and its key; `None` when nothing is cached.
    disk: Option<Disk>,
    engine_key: String,
    /// Bounds of the artifacts kept: total bytes and age since last use.
    max_bytes: u64,
    max_age: std::time::Duration,
    /// The engine's compiled functions, written after each compile.
    functions: Option<std::sync::Arc<FunctionCache>>,
}

/// What [`ComponentCache::evict`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Evicted {
    /// Artifacts removed.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

struct Disk {
    dir: PathBuf,
    key: [u8; KEY_LEN],
}

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Deserialized from the cache after its tag verified.
    Hit,
    /// Compiled (and written to the cache when one is configured).
    Compiled,
    /// Shared with another package of this host whose component has the
    /// same sha256 (compiled or mapped once for both).
    Shared,
    /// Not needed at load (a remembered declaration stood in for the
    /// component): acquired at the plugin's first instantiation.
    Deferred,
}

/// Why the cache (or its key) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The cache dir or key file failed an ownership, mode or type check.
    #[error(transparent)]
    Unsafe(#[from] OwnedPathError),
    /// The key file could not be created or read.
    #[error("cache key {path}: {reason}")]
    Key {
        /// The key file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

fn engine_key(engine: &Engine) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

impl ComponentCache {
    /// A cache in `dir` authenticated by the key in `key_file` (created when
    /// missing), or no caching when `dir` is `None`. The dir is created 0700
    /// and must be a directory owned by this user; the key file must be a
    /// regular file owned by this user that no one else can read.
    pub fn open(
        engine: &Engine,
        dir: Option<PathBuf>,
        key_file: Option<PathBuf>,
    ) -> Result<Self, CacheError> {
        let engine_key = engine_key(engine);
        let disk = match (dir, key_file.or_else(Self::default_key_file)) {
            (None, _) => None,
            (Some(_), None) => {
                tracing::warn!(
                    "no place for the cache key (no HOME); compiled components are not cached"
                );
                None
            }
            (Some(dir), Some(key_file)) => {
                let dir = owned_path::private_dir(&dir)?;
                let key_dir = key_file.parent().map(owned_path::canonical);
                if key_dir.as_deref().is_some_and(|k| k.starts_with(&dir)) {
                    return Err(CacheError::Key {
                        path: key_file,
                        reason: format!(
                            "the key must be kept outside the cache dir {}",
                            dir.display()
                        ),
                    });
                }
                let key = load_or_create_key(&key_file)?;
                Some(Disk { dir, key })
            }
        };
        Ok(Self {
            disk,
            engine_key,
            max_bytes: u64::MAX,
            max_age: std::time::Duration::MAX,
            functions: None,
        })
    }

    /// The same cache, keeping at most `max_bytes` of artifacts, none unused
    /// for longer than `max_age` (applied after every compile).
    pub fn with_limits(mut self, max_bytes: u64, max_age: std::time::Duration) -> Self {
        self.max_bytes = max_bytes;
        self.max_age = max_age;
        self
    }

    /// The same cache, keeping the compiled functions of `functions` (the
    /// engine's incremental compilation cache) in its dir, under its key,
    /// written at the end of each compile and bounded with the artifacts (a
    /// quarter of the size bound).
    pub fn with_functions(mut self, functions: std::sync::Arc<FunctionCache>) -> Self {
        if let Some(disk) = &self.disk {
            let dir = disk.dir.join(format!("functions-{}", self.engine_key));
            functions.attach(&dir, disk.key);
        }
        self.functions = Some(functions);
        self
    }

    /// The cache directory in use (canonical), if any.
    pub fn dir(&self) -> Option<&Path> {
        self.disk.as_ref().map(|d| d.dir.as_path())
    }

    /// The default cache directory: `$XDG_CACHE_HOME/clawhost/components`,
    /// else `~/.cache/clawhost/components`.
    pub fn default_dir() -> Option<PathBuf> {
        clawhost_config::xdg_dir("XDG_CACHE_HOME", ".cache").map(|d| d.join("components"))
    }

    /// The default key file: `$XDG_STATE_HOME/clawhost/component-cache.key`,
    /// else `~/.local/state/clawhost/component-cache.key`.
    pub fn default_key_file() -> Option<PathBuf> {
        clawhost_config::xdg_dir("XDG_STATE_HOME", ".local/state")
            .map(|d| d.join("component-cache.key"))
    }

    fn path(&self, disk: &Disk, sha256: &str) -> PathBuf {
        disk.dir.join(format!("{sha256}-{}.cwasm", self.engine_key))
    }

    /// Whether a compiled artifact for `sha256` is on disk (not yet verified).
    pub fn is_cached(&self, sha256: &str) -> bool {
        self.disk
            .as_ref()
            .is_some_and(|disk| self.path(disk, sha256).is_file())
    }

    /// Load a component: from the cache when its artifact verifies, else
    /// compile `bytes` and store the result.
    pub fn load(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        match self.lookup(engine, sha256) {
            Some(component) => Ok((component, CacheOutcome::Hit)),
            None => Ok((self.compile(engine, sha256, bytes)?, CacheOutcome::Compiled)),
        }
    }

    /// The cached component for `sha256`, mapped from its artifact file,
    /// when there is one and it verifies ([`artifact`]); `None` (after a
    /// warning when an artifact was refused) means compile it.
    pub fn lookup(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let disk = self.disk.as_ref()?;
        let path = self.path(disk, sha256);
        let refused = |reason: &dyn std::fmt::Display| {
            tracing::warn!(path = %path.display(), %reason, "refusing a cached component; recompiling");
        };
        let stamp = match artifact::verify(&disk.key, &self.engine_key, sha256, &path) {
            Ok(Some(stamp)) => stamp,
            Ok(None) => return None,
            Err(reason) => {
                refused(&reason);
                return None;
            }
        };
        // SAFETY: the file at `path` carries a valid keyed-BLAKE3 tag under
        // a key only this user can read, over this component's sha256, the
        // engine key and the artifact (`compile` below wrote it from a
        // component this engine compiled); its stamp, taken again once it is
        // mapped, shows the mapped file is the one verified. Cache files are
        // only ever replaced (renamed over), never written in place.
        let component = match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => component,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring unusable cached component");
                return None;
            }
        };
        match owned_path::stamp(&path, u64::MAX) {
            Ok(now) if now == stamp => {}
            _ => {
                refused(&"it changed while it was loaded");
                return None;
            }
        }
        artifact::mark_used(&path);
        Some(component)
    }

    /// Compile `bytes` (whose sha256 is `sha256`), store the artifact and
    /// keep the cache within its bounds.
    pub fn compile(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
    ) -> wasmtime::Result<Component> {
        let component = Component::new(engine, bytes);
        if let Some(functions) = &self.functions {
            functions.flush();
        }
        let component = component?;
        if let Some(disk) = &self.disk {
            let path = self.path(disk, sha256);
            let stored = component
                .serialize()
                .map_err(anyhow::Error::from)
                .and_then(|a| artifact::store(&disk.key, &self.engine_key, sha256, &path, &a));
            if let Err(e) = stored {
                tracing::warn!(path = %path.display(), error = %e, "could not cache compiled component");
            }
            self.evict(Some(&path));
        }
        Ok(component)
    }
}

fn load_or_create_key(path: &Path) -> Result<[u8; KEY_LEN], CacheError> {
    let bad = |reason: String| CacheError::Key {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(parent) = path.parent() {
        owned_path::private_dir(parent)?;
    }
    match owned_path::open_private_file(path) {
        Ok(mut file) => {
            let mut key = [0u8; KEY_LEN];
            let mut extra = [0u8; 1];
            file.read_exact(&mut key)
                .map_err(|e| bad(format!("unreadable ({e}); delete it to make a new one")))?;
            if file.read(&mut extra).map_err(|e| bad(e.to_string()))? != 0 {
                return Err(bad(format!(
                    "must hold exactly {KEY_LEN} bytes; delete it to make a new one"
                )));
            }
            Ok(key)
        }
        Err(OwnedPathError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let mut key = [0u8; KEY_LEN];
            getrandom::fill(&mut key).map_err(|e| bad(format!("no randomness: {e}")))?;
            // Written whole to a private temporary file, then linked into
            // place without replacing: of several hosts starting at once
            // (parallel tests, two CLIs), one key wins and every host uses it.
            let dir = path.parent().unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)
                .map_err(|e| bad(format!("cannot create: {e}")))?;
            tmp.write_all(&key)
                .and_then(|()| tmp.as_file().sync_all())
                .map_err(|e| bad(format!("cannot write: {e}")))?;
            match tmp.persist_noclobber(path) {
                Ok(_) => Ok(key),
                Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                    load_or_create_key(path)
                }
                Err(e) => Err(bad(format!("cannot create: {}", e.error))),
            }
        }
        Err(e) => Err(e.into()),
    }
}

mod artifact;
pub(crate) mod declarations;
mod evict;
mod functions;
pub(crate) mod packages;
mod sealed;
pub(crate) mod source;

#[cfg(test)]
mod tests;
