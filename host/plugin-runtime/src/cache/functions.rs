//! Cranelift's incremental compilation cache on disk: each compiled function
//! stored under the key Cranelift derives from its code and the compiler's
//! settings, so a component that shares most of its functions with one
//! compiled before compiles only the rest. An edited Python plugin shares
//! the whole CPython core with its previous build: its compile takes less
//! than half the time (BENCHMARKS.md).
//!
//! Entries are native code, so each is authenticated like an artifact:
//! `<dir>/<BLAKE3 of the key>` holds a keyed-BLAKE3 tag over the key and the
//! value, then the value. An entry whose tag fails is ignored (compiled
//! again and rewritten). The directory is per engine (`functions-<engine
//! key>`): another wasmtime or other settings never read these entries.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use wasmtime::CacheStore;

use super::TAG_LEN;

/// Largest entry read (a function's compiled code and metadata).
const MAX_ENTRY: u64 = 64 << 20;

/// The store Cranelift reads and writes while compiling; it keeps nothing
/// until [`FunctionCache::attach`] gives it a directory and key (the engine
/// is made before the cache dir is opened).
#[derive(Debug, Default)]
pub struct FunctionCache {
    disk: OnceLock<(PathBuf, [u8; 32])>,
    reused: AtomicU64,
    stored: AtomicU64,
}

impl FunctionCache {
    /// Keep entries in `dir` (created private), authenticated with `key`.
    pub(super) fn attach(&self, dir: &Path, key: [u8; 32]) {
        match crate::owned_path::private_dir(dir) {
            Ok(dir) => {
                let _ = self.disk.set((dir, key));
            }
            Err(e) => tracing::warn!(error = %e, "no incremental compilation cache"),
        }
    }

    /// Functions taken from the cache, and compiled and stored, since start.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.reused.load(Ordering::Relaxed),
            self.stored.load(Ordering::Relaxed),
        )
    }
}

fn tag(secret: &[u8; 32], key: &[u8], value: &[u8]) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(secret);
    mac.update(b"clawhost function cache v1\0");
    mac.update(&(key.len() as u64).to_le_bytes());
    mac.update(key);
    mac.update(value);
    mac.finalize()
}

fn entry_path(dir: &Path, key: &[u8]) -> PathBuf {
    dir.join(blake3::hash(key).to_hex().as_str())
}

impl CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let (dir, secret) = self.disk.get()?;
        let path = entry_path(dir, key);
        let file = crate::owned_path::open_private_file(&path).ok()?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(&file, MAX_ENTRY), &mut bytes).ok()?;
        if bytes.len() < TAG_LEN {
            return None;
        }
        let value = bytes.split_off(TAG_LEN);
        if tag(secret, key, &value) != blake3::Hash::from_bytes(bytes.try_into().ok()?) {
            tracing::warn!(path = %path.display(), "refusing a cached function; compiling it");
            return None;
        }
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(Cow::Owned(value))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let Some((dir, secret)) = self.disk.get() else {
            return false;
        };
        let path = entry_path(dir, key);
        let mut bytes = tag(secret, key, &value).as_bytes().to_vec();
        bytes.extend_from_slice(&value);
        // Written whole under a private temporary name, then renamed over.
        tempfile::NamedTempFile::new_in(dir)
            .and_then(|mut tmp| {
                std::io::Write::write_all(&mut tmp, &bytes)?;
                tmp.persist(&path).map_err(|e| e.error)
            })
            .inspect(|_| {
                self.stored.fetch_add(1, Ordering::Relaxed);
            })
            .is_ok()
    }
}

/// Remove the oldest entries of `dir` until the rest fit `max_bytes`, and
/// every entry older than `max_age`.
pub(super) fn evict(dir: &Path, max_bytes: u64, max_age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut files: Vec<(PathBuf, u64, std::time::SystemTime)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((e.path(), meta.len(), meta.modified().ok()?))
        })
        .collect();
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    files.sort_by_key(|(_, _, modified)| *modified);
    for (path, len, modified) in files {
        let old = now.duration_since(modified).unwrap_or_default() > max_age;
        if total <= max_bytes && !old {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}
