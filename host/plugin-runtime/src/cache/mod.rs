//! On-disk cache of compiled components, keyed by the component's sha256 and
//! the engine's compatibility hash, so start-up does not recompile.
//!
//! A cached artifact is native code: wasmtime's `deserialize` trusts it
//! blindly. So every artifact is authenticated with keyed BLAKE3 (a MAC, and
//! ~4x faster than HMAC-SHA256 over a 35 MB Python artifact) under a key kept
//! outside the cache dir, over the source component's sha256, the engine key
//! and the artifact bytes; the bytes that were verified are the bytes that
//! are deserialized (read once into memory). A missing, foreign or tampered
//! artifact is recompiled and rewritten, never loaded.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::Engine;

use crate::owned_path::{self, OwnedPathError};

/// First bytes of every cache file (format version 2: keyed BLAKE3 tags).
const MAGIC: &[u8; 16] = b"clawhost-cwasm2\n";
/// Tag length (keyed BLAKE3, for artifacts and digest records).
const TAG_LEN: usize = 32;
/// Key length.
const KEY_LEN: usize = 32;
/// Largest cache file read.
const MAX_ARTIFACT: u64 = 1 << 30;
/// Bytes before the artifact in a cache file.
const HEADER_LEN: usize = MAGIC.len() + TAG_LEN;

/// A directory of serialized components, authenticated by a key.
pub struct ComponentCache {
    /// The directory and its key; `None` when nothing is cached.
    disk: Option<Disk>,
    engine_key: String,
    /// Bounds of the artifacts kept: total bytes and age since last use.
    max_bytes: u64,
    max_age: std::time::Duration,
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

fn user_dir(var: &str, home_suffix: &[&str]) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| {
                home_suffix
                    .iter()
                    .fold(PathBuf::from(h), |path, part| path.join(part))
            })
        })
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
        })
    }

    /// The same cache, keeping at most `max_bytes` of artifacts, none unused
    /// for longer than `max_age` (applied after every compile).
    pub fn with_limits(mut self, max_bytes: u64, max_age: std::time::Duration) -> Self {
        self.max_bytes = max_bytes;
        self.max_age = max_age;
        self
    }

    /// Remove artifacts unused for longer than the age bound, then the least
    /// recently used ones until the rest fit the size bound. `keep` (the
    /// artifact just written) is never removed.
    pub fn evict(&self, keep: Option<&Path>) -> Evicted {
        let Some(disk) = &self.disk else {
            return Evicted::default();
        };
        let Ok(entries) = std::fs::read_dir(&disk.dir) else {
            return Evicted::default();
        };
        let now = std::time::SystemTime::now();
        let mut files: Vec<(PathBuf, u64, std::time::SystemTime)> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .filter_map(|p| {
                let meta = std::fs::symlink_metadata(&p).ok().filter(|m| m.is_file())?;
                Some((p, meta.len(), meta.modified().ok()?))
            })
            .collect();
        files.sort_by_key(|(_, _, used)| *used);
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        let mut evicted = Evicted::default();
        for (path, len, used) in files {
            let old = now.duration_since(used).unwrap_or_default() > self.max_age;
            if (total <= self.max_bytes && !old) || keep == Some(path.as_path()) {
                continue;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
                evicted.files += 1;
                evicted.bytes += len;
            }
        }
        if evicted.files > 0 {
            tracing::info!(target: "clawhost::progress", files = evicted.files, bytes = evicted.bytes, "evicted compiled components from the cache");
        }
        evicted
    }

    /// The cache directory in use (canonical), if any.
    pub fn dir(&self) -> Option<&Path> {
        self.disk.as_ref().map(|d| d.dir.as_path())
    }

    /// The default cache directory: `$XDG_CACHE_HOME/clawhost/components`,
    /// else `~/.cache/clawhost/components`.
    pub fn default_dir() -> Option<PathBuf> {
        user_dir("XDG_CACHE_HOME", &[".cache"]).map(|d| d.join("clawhost").join("components"))
    }

    /// The default key file: `$XDG_STATE_HOME/clawhost/component-cache.key`,
    /// else `~/.local/state/clawhost/component-cache.key`.
    pub fn default_key_file() -> Option<PathBuf> {
        user_dir("XDG_STATE_HOME", &[".local", "state"])
            .map(|d| d.join("clawhost").join("component-cache.key"))
    }

    fn path(&self, disk: &Disk, sha256: &str) -> PathBuf {
        disk.dir.join(format!("{sha256}-{}.cwasm", self.engine_key))
    }

    fn tag(&self, disk: &Disk, sha256: &str, artifact: &[u8]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&disk.key);
        mac.update(b"clawhost component cache v2\0");
        mac.update(sha256.as_bytes());
        mac.update(b"\0");
        mac.update(self.engine_key.as_bytes());
        mac.update(b"\0");
        mac.update(artifact);
        mac.finalize()
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
        let Some(disk) = &self.disk else {
            return Ok((Component::new(engine, bytes)?, CacheOutcome::Compiled));
        };
        let path = self.path(disk, sha256);
        match self.read_verified(disk, &path, sha256) {
            Ok(Some(file)) => {
                // SAFETY: these exact bytes carry a valid keyed-BLAKE3 tag under a key
                // only this user can read, over this component's sha256 and
                // engine key: they were written by `store` below from a
                // component this engine compiled.
                match unsafe { Component::deserialize(engine, &file[HEADER_LEN..]) } {
                    Ok(component) => {
                        // Used now: the age and size bounds evict the least
                        // recently used artifacts first.
                        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                            let _ = f.set_modified(std::time::SystemTime::now());
                        }
                        return Ok((component, CacheOutcome::Hit));
                    }
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "ignoring unusable cached component")
                    }
                }
            }
            Ok(None) => {}
            Err(reason) => {
                tracing::warn!(path = %path.display(), %reason, "refusing a cached component; recompiling")
            }
        }
        let component = Component::new(engine, bytes)?;
        if let Err(e) = self.store(disk, &path, sha256, &component) {
            tracing::warn!(path = %path.display(), error = %e, "could not cache compiled component");
        }
        self.evict(Some(&path));
        Ok((component, CacheOutcome::Compiled))
    }

    /// The whole cache file in `path` (artifact from [`HEADER_LEN`] on) if
    /// it exists and its tag verifies; `Err` says why an existing file was refused.
    fn read_verified(
        &self,
        disk: &Disk,
        path: &Path,
        sha256: &str,
    ) -> Result<Option<Vec<u8>>, String> {
        let data = match owned_path::read_bounded(path, MAX_ARTIFACT) {
            Ok(data) => data,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        if data.starts_with(&MAGIC[..MAGIC.len() - 2]) && !data.starts_with(MAGIC) {
            // An older format of ours: recompiled and replaced, silently.
            return Ok(None);
        }
        if data.len() <= HEADER_LEN || !data.starts_with(MAGIC) {
            return Err("not a clawhost cache file".into());
        }
        let (tag, artifact) = data[MAGIC.len()..].split_at(TAG_LEN);
        let tag: [u8; TAG_LEN] = tag.try_into().expect("split at TAG_LEN");
        // `blake3::Hash`'s equality is constant-time.
        if self.tag(disk, sha256, artifact) != blake3::Hash::from_bytes(tag) {
            return Err("its authentication tag does not match".into());
        }
        Ok(Some(data))
    }

    fn store(
        &self,
        disk: &Disk,
        path: &Path,
        sha256: &str,
        component: &Component,
    ) -> anyhow::Result<()> {
        let artifact = component.serialize()?;
        let tag = *self.tag(disk, sha256, &artifact).as_bytes();
        let dir = path.parent().expect("cache path has a parent");
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(MAGIC)?;
        tmp.write_all(&tag)?;
        tmp.write_all(&artifact)?;
        tmp.persist(path)?;
        Ok(())
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

mod digests;

#[cfg(test)]
mod tests;
