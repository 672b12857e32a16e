//! Cranelift's incremental compilation cache on disk: each compiled function
//! stored under the key Cranelift derives from its code and the compiler's
//! settings, so a component that shares most of its functions with one
//! compiled before compiles only the rest. An edited Python plugin shares
//! the whole CPython core with its previous build: its compile takes less
//! than half the time (BENCHMARKS.md).
//!
//! The functions one compile stores are kept in memory and written at its
//! end as one pack file (`<random>.pack`): thousands of small files would
//! cost more than the compile saves. A pack is a run of entries, each
//! `BLAKE3(key) | value length (u32 LE) | tag | value`, the tag a keyed
//! BLAKE3 over the key and the value under the cache key: entries are native
//! code, so one whose tag fails is compiled again, never used. The
//! directory is per engine (`functions-<engine key>`): another wasmtime or
//! other settings never read these entries.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use wasmtime::CacheStore;

use super::TAG_LEN;

/// Largest entry read (a function's compiled code and metadata).
const MAX_ENTRY: u32 = 64 << 20;
/// Bytes before an entry's value: its key's hash, its length, its tag.
const HEADER: u64 = 32 + 4 + TAG_LEN as u64;

/// The store Cranelift reads and writes while compiling; it keeps nothing
/// until [`FunctionCache::attach`] gives it a directory and key (the engine
/// is made before the cache dir is opened).
#[derive(Debug, Default)]
pub struct FunctionCache {
    disk: OnceLock<(PathBuf, [u8; 32])>,
    state: Mutex<State>,
    reused: AtomicU64,
    stored: AtomicU64,
}

/// Where each entry of the packs on disk is: its pack, its tag's offset and
/// its value's length, by its key's hash.
type Index = HashMap<[u8; 32], (Arc<File>, u64, u32)>;

#[derive(Debug, Default)]
struct State {
    /// Where each entry of the packs on disk is (its tag's offset and its
    /// value's length), read at the first lookup.
    index: Option<Index>,
    /// Entries stored since the last [`FunctionCache::flush`]: tag, value.
    fresh: HashMap<[u8; 32], ([u8; TAG_LEN], Vec<u8>)>,
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

    /// Write the functions stored since the last flush as one pack (called
    /// when a compile ends); best effort: what is not written is compiled
    /// again next time.
    pub(super) fn flush(&self) {
        let Some((dir, _)) = self.disk.get() else {
            return;
        };
        let mut state = clawhost_agent_core::lock(&self.state);
        let fresh = std::mem::take(&mut state.fresh);
        if fresh.is_empty() {
            return;
        }
        let written = tempfile::Builder::new()
            .suffix(".pack")
            .tempfile_in(dir)
            .and_then(|mut tmp| {
                let mut out = std::io::BufWriter::new(tmp.as_file_mut());
                for (hash, (tag, value)) in &fresh {
                    out.write_all(hash)?;
                    out.write_all(&(value.len() as u32).to_le_bytes())?;
                    out.write_all(tag)?;
                    out.write_all(value)?;
                }
                out.flush()?;
                drop(out);
                let (file, path) = tmp.keep().map_err(|e| e.error)?;
                Ok((file, path))
            });
        match written {
            Ok((file, path)) => {
                if let Some(index) = &mut state.index {
                    index_pack(index, Arc::new(file), &path);
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not store compiled functions"),
        }
    }
}

fn tag(secret: &[u8; 32], key: &[u8], value: &[u8]) -> [u8; TAG_LEN] {
    let mut mac = blake3::Hasher::new_keyed(secret);
    mac.update(b"clawhost function cache v1\0");
    mac.update(&(key.len() as u64).to_le_bytes());
    mac.update(key);
    mac.update(value);
    *mac.finalize().as_bytes()
}

/// Add the entries of the pack `file` to `index` (a pack that does not
/// parse to its end contributes the entries before the damage).
fn index_pack(index: &mut Index, file: Arc<File>, path: &Path) {
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return;
    };
    let mut reader = BufReader::new(&*file);
    if reader.seek(SeekFrom::Start(0)).is_err() {
        return;
    }
    let mut at = 0u64;
    while at + HEADER <= len {
        let mut head = [0u8; HEADER as usize];
        if reader.read_exact(&mut head).is_err() {
            break;
        }
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&head[..32]);
        let size = u32::from_le_bytes([head[32], head[33], head[34], head[35]]);
        if size > MAX_ENTRY || at + HEADER + u64::from(size) > len {
            tracing::warn!(path = %path.display(), "a damaged pack of compiled functions");
            break;
        }
        // The tag and the value follow the length: one read gets both.
        index.insert(hash, (file.clone(), at + 36, size));
        if reader.seek_relative(i64::from(size)).is_err() {
            break;
        }
        at += HEADER + u64::from(size);
    }
}

/// Index every pack in `dir` that is a private file of this user.
fn load_index(dir: &Path) -> Index {
    let mut index = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return index;
    };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        if path.extension().is_some_and(|x| x == "pack") {
            if let Ok(file) = crate::owned_path::open_private_file(&path) {
                index_pack(&mut index, Arc::new(file), &path);
            }
        }
    }
    index
}

impl CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let (dir, secret) = self.disk.get()?;
        let hash = *blake3::hash(key).as_bytes();
        let mut state = clawhost_agent_core::lock(&self.state);
        if let Some((_, value)) = state.fresh.get(&hash) {
            self.reused.fetch_add(1, Ordering::Relaxed);
            return Some(Cow::Owned(value.clone()));
        }
        let (file, offset, size) = state
            .index
            .get_or_insert_with(|| load_index(dir))
            .get(&hash)?
            .clone();
        drop(state);
        let mut bytes = vec![0u8; TAG_LEN + size as usize];
        file.read_exact_at(&mut bytes, offset).ok()?;
        let value = bytes.split_off(TAG_LEN);
        if tag(secret, key, &value)[..] != bytes[..] {
            tracing::warn!("refusing a cached function whose tag fails; compiling it");
            return None;
        }
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(Cow::Owned(value))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let Some((_, secret)) = self.disk.get() else {
            return false;
        };
        if value.len() > MAX_ENTRY as usize {
            return false;
        }
        let hash = *blake3::hash(key).as_bytes();
        let tag = tag(secret, key, &value);
        let mut state = clawhost_agent_core::lock(&self.state);
        // Functions of the same code compiled in parallel (e.g. the
        // trampolines of one signature) store one entry, counted once.
        if state.fresh.insert(hash, (tag, value)).is_none() {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
        true
    }
}

/// Remove the oldest packs of `dir` until the rest fit `max_bytes`, and
/// every pack older than `max_age`.
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
