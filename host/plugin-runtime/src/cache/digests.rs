//! Remembered component digests: the sha256 of a component file keyed by
//! its path and [`FileStamp`], so an unchanged 18 MB component is not hashed
//! again at every start. A record is authenticated with the cache's key
//! (keyed BLAKE3; a forged record could otherwise pass a pin); a changed file
//! (any write moves its status-change time) or a record that does not verify
//! is hashed again.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{ComponentCache, Disk, TAG_LEN};
use crate::admission::sha256_hex;
use crate::owned_path::{self, FileStamp};

/// Largest record read.
const MAX_RECORD: u64 = 4096;

fn tag(disk: &Disk, path: &str, stamp: &str, sha256: &str) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(&disk.key);
    mac.update(b"clawhost component digest v1\0");
    for part in [path, stamp, sha256] {
        mac.update(part.as_bytes());
        mac.update(b"\0");
    }
    mac.finalize()
}

fn record_path(disk: &Disk, file: &str) -> PathBuf {
    let name = sha256_hex(file.as_bytes());
    disk.dir.join("digests").join(name)
}

impl ComponentCache {
    /// The sha256 recorded for `file` (its canonical path, as
    /// `PluginPackage::stamp_component` gives it) at `stamp`, if a record
    /// verifies; the file is not read.
    pub fn remembered(&self, file: &Path, stamp: &FileStamp) -> Option<String> {
        let disk = self.disk.as_ref()?;
        let file = file.to_string_lossy().into_owned();
        read_record(disk, &record_path(disk, &file), &file, stamp.as_str())
    }

    /// The sha256 of `bytes`, read from `file` with `stamp` (`None`: it
    /// changed while read). Taken from a verified record of the same file
    /// and stamp when there is one; otherwise computed (and recorded).
    pub fn digest(&self, file: &Path, stamp: Option<&FileStamp>, bytes: &[u8]) -> String {
        let (Some(disk), Some(stamp)) = (&self.disk, stamp) else {
            return sha256_hex(bytes);
        };
        let file = owned_path::canonical(file).to_string_lossy().into_owned();
        let record = record_path(disk, &file);
        if let Some(sha) = read_record(disk, &record, &file, stamp.as_str()) {
            return sha;
        }
        let sha = sha256_hex(bytes);
        if let Err(e) = write_record(disk, &record, &file, stamp.as_str(), &sha) {
            tracing::debug!(record = %record.display(), error = %e, "could not remember a component digest");
        }
        sha
    }
}

/// The sha256 a record holds, if it is for `file` at `stamp` and verifies.
fn read_record(disk: &Disk, record: &Path, file: &str, stamp: &str) -> Option<String> {
    let data = owned_path::read_bounded(record, MAX_RECORD).ok()?;
    let text = String::from_utf8(data).ok()?;
    let mut lines = text.lines();
    let (path, at, sha, mac) = (lines.next()?, lines.next()?, lines.next()?, lines.next()?);
    if path != file || at != stamp || sha.len() != 64 {
        return None;
    }
    let mac: [u8; TAG_LEN] = hex::decode(mac).ok()?.try_into().ok()?;
    // `blake3::Hash`'s equality is constant-time.
    (tag(disk, file, stamp, sha) == blake3::Hash::from_bytes(mac)).then(|| sha.to_string())
}

fn write_record(
    disk: &Disk,
    record: &Path,
    file: &str,
    stamp: &str,
    sha: &str,
) -> anyhow::Result<()> {
    let dir = record.parent().expect("a record path has a parent");
    owned_path::private_dir(dir)?;
    let mac = tag(disk, file, stamp, sha).to_hex();
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    writeln!(tmp, "{file}\n{stamp}\n{sha}\n{mac}")?;
    tmp.persist(record)?;
    Ok(())
}
