//! One cached artifact: `<sha256>-<engine>.cwasm`, the bytes wasmtime
//! serialized (so it can be mapped as it is), beside `<…>.tag`, a text record:
//!
//! ```text
//! clawhost-cwasm3
//! <keyed BLAKE3 of the sha256, the engine key and the artifact bytes>
//! <the artifact file's stamp when that tag was last checked>
//! <keyed BLAKE3 of the sha256, the engine key, the tag and the stamp>
//! ```
//!
//! While the artifact file keeps the stamp recorded (any write moves its
//! status-change time), its bytes are the ones the tag was checked over, and
//! nothing is read. A new stamp (a copied or restored cache) means the whole
//! artifact is read and its tag checked again, then the stamp re-recorded.
//! The tag file's modification time is the artifact's last use.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::TAG_LEN;
use crate::owned_path::{self, FileStamp};

/// First line of a tag file.
const MAGIC: &str = "clawhost-cwasm3";
/// Largest artifact read to check its tag.
const MAX_ARTIFACT: u64 = 1 << 30;
/// Largest tag file read.
const MAX_TAG_FILE: u64 = 4096;

/// The tag file beside the artifact at `path`.
pub(super) fn tag_path(path: &Path) -> PathBuf {
    path.with_extension("tag")
}

fn artifact_tag(key: &[u8; 32], sha256: &str, engine_key: &str, artifact: &[u8]) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(key);
    mac.update(b"clawhost component cache v3\0");
    for part in [sha256, engine_key] {
        mac.update(part.as_bytes());
        mac.update(b"\0");
    }
    mac.update(artifact);
    mac.finalize()
}

fn stamp_tag(
    key: &[u8; 32],
    sha256: &str,
    engine_key: &str,
    tag: &str,
    stamp: &str,
) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(key);
    mac.update(b"clawhost component stamp v3\0");
    for part in [sha256, engine_key, tag, stamp] {
        mac.update(part.as_bytes());
        mac.update(b"\0");
    }
    mac.finalize()
}

fn hash_of_hex(hex_text: &str) -> Option<blake3::Hash> {
    let bytes: [u8; TAG_LEN] = hex::decode(hex_text).ok()?.try_into().ok()?;
    Some(blake3::Hash::from_bytes(bytes))
}

/// Why a cached artifact is refused (and recompiled).
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    /// Its tag file could not be read.
    #[error("its tag file: {0}")]
    TagFile(std::io::Error),
    /// Its tag file is damaged.
    #[error("its tag file {0}")]
    Damaged(&'static str),
    /// The artifact could not be stamped or read.
    #[error("{0}")]
    Artifact(std::io::Error),
    /// Its bytes are not the ones tagged.
    #[error("its authentication tag does not match")]
    TagMismatch,
    /// It changed while it was read.
    #[error("it changed while it was read")]
    Changed,
}

/// The stamp of the artifact at `path` when it verifies; `Ok(None)` when
/// there is nothing to verify (no artifact, no tag file, or a tag file of an
/// older format: recompiled silently); `Err` says why an artifact was refused.
pub(super) fn verify(
    key: &[u8; 32],
    engine_key: &str,
    sha256: &str,
    path: &Path,
) -> Result<Option<FileStamp>, Refused> {
    let record = match owned_path::read_bounded(&tag_path(path), MAX_TAG_FILE) {
        Ok(record) => record,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Refused::TagFile(e)),
    };
    let record = String::from_utf8(record).map_err(|_| Refused::Damaged("is not text"))?;
    let mut lines = record.lines();
    if lines.next() != Some(MAGIC) {
        return Ok(None);
    }
    let (Some(tag), Some(stamp), Some(stamp_mac)) = (lines.next(), lines.next(), lines.next())
    else {
        return Err(Refused::Damaged("is cut short"));
    };
    let tag_hash = hash_of_hex(tag).ok_or(Refused::Damaged("holds no tag"))?;
    let now = match owned_path::stamp(path, MAX_ARTIFACT) {
        Ok(now) => now,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Refused::Artifact(e)),
    };
    // `blake3::Hash`'s equality is constant-time.
    if now.as_str() == stamp
        && hash_of_hex(stamp_mac) == Some(stamp_tag(key, sha256, engine_key, tag, stamp))
    {
        return Ok(Some(now));
    }
    // Not the file last checked: check its bytes, then remember this stamp.
    let (artifact, read_stamp) =
        owned_path::read_stamped(path, MAX_ARTIFACT).map_err(Refused::Artifact)?;
    if artifact_tag(key, sha256, engine_key, &artifact) != tag_hash {
        return Err(Refused::TagMismatch);
    }
    let read_stamp = read_stamp.ok_or(Refused::Changed)?;
    if let Err(e) = write_record(key, engine_key, sha256, path, tag, &read_stamp) {
        tracing::debug!(path = %path.display(), error = %e, "could not record a verified artifact's stamp");
    }
    Ok(Some(read_stamp))
}

/// Write `artifact` to `path` (replacing, never writing in place) and its
/// tag file.
pub(super) fn store(
    key: &[u8; 32],
    engine_key: &str,
    sha256: &str,
    path: &Path,
    artifact: &[u8],
) -> anyhow::Result<()> {
    let tag = artifact_tag(key, sha256, engine_key, artifact).to_hex();
    let dir = parent(path)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(artifact)?;
    let file = tmp.persist(path)?;
    // Renaming moves the status-change time: the stamp is taken after, of
    // the file written here (another host may have renamed its own over it
    // since; then the stamps differ and a reader checks the bytes).
    let stamp = owned_path::stamp_of(&file)?;
    write_record(key, engine_key, sha256, path, &tag, &stamp)
}

fn write_record(
    key: &[u8; 32],
    engine_key: &str,
    sha256: &str,
    path: &Path,
    tag: &str,
    stamp: &FileStamp,
) -> anyhow::Result<()> {
    let stamp = stamp.as_str();
    let mac = stamp_tag(key, sha256, engine_key, tag, stamp).to_hex();
    let dir = parent(path)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    writeln!(tmp, "{MAGIC}\n{tag}\n{stamp}\n{mac}")?;
    tmp.persist(tag_path(path))?;
    Ok(())
}

/// Record that the artifact at `path` was used now (the size and age bounds
/// evict the least recently used first). The tag file carries the time: a
/// touch of the artifact itself would move its stamp.
pub(super) fn mark_used(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(tag_path(path)) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// The directory a cache file is written in.
pub(super) fn parent(path: &Path) -> anyhow::Result<&Path> {
    path.parent()
        .ok_or_else(|| anyhow::anyhow!("{}: a cache file path without a directory", path.display()))
}
