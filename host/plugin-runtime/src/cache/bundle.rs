//! The small files a start reads for every package (its manifest and its
//! package record), kept together in one sealed file per plugin path, each
//! with the [`FileStamp`] it was read at. A warm start `lstat`s each file
//! and takes its bytes from the bundle while its stamp has not moved: one
//! system call per file instead of four (open, stat, read, close), which
//! were most of what a plugin added to a fresh process's start.
//!
//! A file whose stamp moved, that is not in the bundle, or that is not a
//! plain regular file within its size limit, is read from disk as before
//! (so errors are the same); the bundle is then rewritten once, after the
//! packages are read, with what this start used. A bundle is sealed with
//! the cache's key ([`sealed`]) for its plugin path: a forged one could
//! otherwise change a manifest's capabilities.

use std::borrow::Cow;
use std::io;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize, Serializer};

use super::{sealed, ComponentCache, Disk};
use crate::admission::sha256_hex;
use crate::owned_path::{self, FileStamp};

/// Largest bundle read or written: the manifests and records of hundreds
/// of packages fit many times over.
const MAX_BUNDLE: u64 = 64 << 20;

/// How long ago a file must have last changed to be kept (see
/// [`Bundle::settled`]): many times any file system clock's tick.
const SETTLE: Duration = Duration::from_secs(1);

/// The subdirectory of the cache holding bundles.
const DIR: &str = "bundles";

/// What a bundle is sealed for (with its plugin path).
const CONTEXT: &[u8] = b"clawhost start bundle v1\0";

/// One file's bytes at one stamp, as a bundle holds them: borrowed from a
/// bundle's bytes when read (nothing is copied to decode it), from the
/// start's reads when written.
#[derive(Serialize, Deserialize)]
struct Kept<'a> {
    /// The file's path, as it was read (its bytes: a path need not be text).
    #[serde(serialize_with = "as_bytes")]
    path: &'a [u8],
    /// Its stamp when `bytes` were read.
    stamp: &'a str,
    /// Its content.
    #[serde(serialize_with = "as_bytes")]
    bytes: &'a [u8],
}

/// Write a byte field as bytes (postcard copies them whole), not as a
/// sequence of numbers.
fn as_bytes<S: Serializer>(bytes: &&[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(bytes)
}

/// Where one kept file lies in the bundle's data, and whether this start
/// took it.
struct Entry {
    path: Range<usize>,
    stamp: Range<usize>,
    bytes: Range<usize>,
    taken: AtomicBool,
}

/// A file this start read from disk.
struct Fresh {
    path: PathBuf,
    stamp: String,
    bytes: Vec<u8>,
}

/// The small files of one plugin path's packages, as the last start kept
/// them, and what this start reads; shared by the threads reading packages.
pub(crate) struct Bundle {
    /// Where it is kept; `None`: no cache dir.
    file: Option<PathBuf>,
    /// What the plugin path was: part of what the bundle is sealed for.
    plugin_path: String,
    /// The last start's bundle as read, its tag verified.
    data: Vec<u8>,
    /// Its files, by path.
    entries: Vec<Entry>,
    /// How many of `entries` this start took.
    taken: AtomicUsize,
    /// Files this start read from disk, each at a stamp that did not move
    /// while it was read.
    fresh: Mutex<Vec<Fresh>>,
    /// Whether this start read a file that the bundle does not hold as it is.
    missed: AtomicBool,
    /// How long ago a file must have last changed to be kept.
    settle: Duration,
}

impl Bundle {
    /// An empty bundle that is never written (no cache dir, or a single
    /// package read on its own).
    pub(crate) fn none() -> Self {
        Self {
            file: None,
            plugin_path: String::new(),
            data: Vec::new(),
            entries: Vec::new(),
            taken: AtomicUsize::new(0),
            fresh: Mutex::new(Vec::new()),
            missed: AtomicBool::new(false),
            settle: SETTLE,
        }
    }

    /// The bytes of the regular file at `path` (at most `max`; a symlink
    /// is refused, as by [`owned_path::read_bounded`]): borrowed from the
    /// bundle if its stamp has not moved, else read from disk and kept for
    /// the next start.
    pub(crate) fn read(&self, path: &Path, max: u64) -> io::Result<Cow<'_, [u8]>> {
        if self.file.is_none() {
            return owned_path::read_bounded(path, max).map(Cow::Owned);
        }
        if let Some(entry) = self.entry(path) {
            let stamp = &self.data[entry.stamp.clone()];
            let unmoved = std::fs::symlink_metadata(path).is_ok_and(|meta| {
                meta.is_file() && meta.len() <= max && FileStamp::is_of(stamp, &meta)
            });
            if unmoved {
                if !entry.taken.swap(true, Ordering::Relaxed) {
                    self.taken.fetch_add(1, Ordering::Relaxed);
                }
                return Ok(Cow::Borrowed(&self.data[entry.bytes.clone()]));
            }
        }
        // A file that cannot be read (a subdirectory without a manifest,
        // a symlink) is not one to bundle: the bundle is not stale for it.
        let (bytes, stamp) = owned_path::read_stamped(path, max)?;
        self.missed.store(true, Ordering::Relaxed);
        if let Some(stamp) = stamp.filter(|_| self.settled(path)) {
            let kept = Fresh {
                path: path.to_path_buf(),
                stamp: stamp.as_str().to_string(),
                bytes: bytes.clone(),
            };
            let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
            fresh.push(kept);
        }
        Ok(Cow::Owned(bytes))
    }

    /// The kept file at `path`, if the bundle holds one.
    fn entry(&self, path: &Path) -> Option<&Entry> {
        let path = path.as_os_str().as_bytes();
        let at = self
            .entries
            .binary_search_by(|e| self.data[e.path.clone()].cmp(path))
            .ok()?;
        Some(&self.entries[at])
    }

    /// Whether the file at `path` last changed at least `settle` ago: on
    /// a file system whose clock is coarse, a write in the same tick as the
    /// read that stamped it would leave the stamp as it was, so a file that
    /// changed just now is not kept (the next start reads it again).
    fn settled(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return false;
        };
        let changed = std::time::UNIX_EPOCH
            + Duration::new(
                u64::try_from(meta.ctime()).unwrap_or(0),
                u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            );
        SystemTime::now()
            .duration_since(changed)
            .is_ok_and(|age| age >= self.settle)
    }

    /// [`Self::read`] keeps files however recently they changed (tests
    /// that write a file and start at once).
    #[cfg(test)]
    pub(crate) fn settling_at_once(mut self) -> Self {
        self.settle = Duration::ZERO;
        self
    }

    /// Whether the next start would find this bundle out of date: a file
    /// was read from disk, or one it holds was not used.
    pub(crate) fn is_stale(&self) -> bool {
        self.file.is_some()
            && (self.missed.load(Ordering::Relaxed)
                || self.taken.load(Ordering::Relaxed) != self.entries.len())
    }
}

/// Where `part`, a slice of `data`, lies in it (`None` if it is not one).
fn within(data: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
    let range = start..start.checked_add(part.len())?;
    (range.end <= data.len()).then_some(range)
}

/// Where the bundle of `plugin_path` is kept.
pub(super) fn bundle_file(disk: &Disk, plugin_path: &str) -> PathBuf {
    disk.dir.join(DIR).join(sha256_hex(plugin_path.as_bytes()))
}

impl ComponentCache {
    /// The bundle of the packages under `plugin_path`, as the last start
    /// kept it (empty when there is none, or it does not verify).
    pub(crate) fn bundle(&self, plugin_path: &Path) -> Bundle {
        let Some(disk) = &self.disk else {
            return Bundle::none();
        };
        let plugin_path = plugin_path.to_string_lossy().into_owned();
        let file = bundle_file(disk, &plugin_path);
        let context = [CONTEXT, plugin_path.as_bytes()];
        let (data, entries) = owned_path::read_bounded(&file, MAX_BUNDLE)
            .ok()
            .and_then(|data| {
                let body = sealed::verified_body(disk, &file, &data, &context)?;
                let kept: Vec<Kept> = postcard::from_bytes(body).ok()?;
                let entries = kept.iter().filter_map(|k| {
                    Some(Entry {
                        path: within(&data, k.path)?,
                        stamp: within(&data, k.stamp.as_bytes())?,
                        bytes: within(&data, k.bytes)?,
                        taken: AtomicBool::new(false),
                    })
                });
                let mut entries: Vec<Entry> = entries.collect();
                entries.sort_by(|a, b| data[a.path.clone()].cmp(&data[b.path.clone()]));
                Some((data, entries))
            })
            .unwrap_or_default();
        Bundle {
            file: Some(file),
            plugin_path,
            data,
            entries,
            ..Bundle::none()
        }
    }

    /// Write `bundle` for the next start, if it is stale: the files this
    /// start took from it and those it read fresh. Failures are logged (the
    /// next start reads the files from disk).
    pub(crate) fn keep_bundle(&self, bundle: &Bundle) {
        let (Some(disk), Some(file)) = (&self.disk, &bundle.file) else {
            return;
        };
        if !bundle.is_stale() {
            return;
        }
        let fresh = std::mem::take(&mut *bundle.fresh.lock().unwrap_or_else(|p| p.into_inner()));
        // What this start took, and what it read: a file of a package that
        // is gone, or that moved, is dropped.
        let data = &bundle.data;
        let taken = bundle
            .entries
            .iter()
            .filter(|e| e.taken.load(Ordering::Relaxed));
        let mut files: Vec<Kept> = taken
            .map(|e| Kept {
                path: &data[e.path.clone()],
                stamp: std::str::from_utf8(&data[e.stamp.clone()]).unwrap_or_default(),
                bytes: &data[e.bytes.clone()],
            })
            .chain(fresh.iter().map(|f| Kept {
                path: f.path.as_os_str().as_bytes(),
                stamp: &f.stamp,
                bytes: &f.bytes,
            }))
            .collect();
        files.sort_by(|a, b| a.path.cmp(b.path));
        files.dedup_by(|a, b| a.path == b.path);
        let size: usize = files.iter().map(|k| k.bytes.len()).sum();
        if size as u64 > MAX_BUNDLE / 2 {
            tracing::debug!(bundle = %file.display(), size, "the packages' small files are too large to bundle");
            return;
        }
        let context = [CONTEXT, bundle.plugin_path.as_bytes()];
        if let Err(e) = sealed::write(disk, file, &context, &files) {
            tracing::debug!(bundle = %file.display(), error = %e, "could not write the start bundle");
        }
    }
}
