//! Small records sealed with the cache's key: a keyed-BLAKE3 tag over what
//! the record is for (its context) and its postcard body, then the body.
//! A body is decoded only after its tag verifies; a record moved under
//! another name, or written for another purpose, does not verify.

use std::io::Write;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Disk, TAG_LEN};
use crate::owned_path;

fn tag(disk: &Disk, context: &[&[u8]], body: &[u8]) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(&disk.key);
    for part in context {
        mac.update(part);
    }
    mac.update(body);
    mac.finalize()
}

/// The record at `path` (at most `max` bytes), if it verifies under
/// `context` and decodes; a record that does not verify is logged.
pub(super) fn read<T: DeserializeOwned>(
    disk: &Disk,
    path: &Path,
    max: u64,
    context: &[&[u8]],
) -> Option<T> {
    let data = owned_path::read_bounded(path, max).ok()?;
    open(disk, path, &data, context)
}

/// The record in `data` (read from `path`), if it verifies under `context`
/// and decodes; a record that does not verify is logged.
pub(super) fn open<T: DeserializeOwned>(
    disk: &Disk,
    path: &Path,
    data: &[u8],
    context: &[&[u8]],
) -> Option<T> {
    postcard::from_bytes(verified_body(disk, path, data, context)?).ok()
}

/// The body of the record in `data` (read from `path`), not decoded, if
/// it verifies under `context`; a record that does not verify is logged.
pub(super) fn verified_body<'d>(
    disk: &Disk,
    path: &Path,
    data: &'d [u8],
    context: &[&[u8]],
) -> Option<&'d [u8]> {
    let (mac, body) = data.split_at_checked(TAG_LEN)?;
    let mac: [u8; TAG_LEN] = mac.try_into().ok()?;
    // `blake3::Hash`'s equality is constant-time.
    if tag(disk, context, body) != blake3::Hash::from_bytes(mac) {
        tracing::warn!(record = %path.display(), "a cache record does not verify; ignoring it");
        return None;
    }
    Some(body)
}

/// Write `value` to `path` under `context`: whole, to a temporary file in
/// the same private directory, then renamed over the old record.
pub(super) fn write<T: Serialize>(
    disk: &Disk,
    path: &Path,
    context: &[&[u8]],
    value: &T,
) -> anyhow::Result<()> {
    let dir = super::artifact::parent(path)?;
    owned_path::private_dir(dir)?;
    let body = postcard::to_allocvec(value)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(tag(disk, context, &body).as_bytes())?;
    tmp.write_all(&body)?;
    tmp.persist(path)?;
    Ok(())
}
