//! Package records: what the cache remembers of one component file, keyed
//! by its canonical path, in one small file, so a warm start reads one
//! record per plugin (from its plugin path's [`Bundle`] while the record's
//! stamp has not moved):
//! - the file's sha256 at its [`FileStamp`], so an unchanged 18 MB
//!   component is not hashed again at every start (any write moves its
//!   status-change time: a changed file is hashed again);
//! - the declarations its plugin answered under its last few keys
//!   ([`declarations`], which also keeps each under its key alone).
//!
//! A record is authenticated with the cache's key (keyed BLAKE3): a forged
//! one could otherwise pass a pin, or plant tools or hooks. One that does
//! not verify is ignored (the file is hashed and `register` called again).
//! Its body is postcard, read only after its tag verified.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::declarations::{self, DeclarationKey, KeyTag};
use super::{sealed, ComponentCache, Disk};
use crate::abi::Declared;
use crate::admission::sha256_hex;
use crate::api_version::ComponentFacts;
use crate::owned_path::{self, FileStamp};

/// Largest record read: a few declarations of 128 tools with their schemas
/// fit many times over.
const MAX_RECORD: u64 = 8 << 20;

/// Declarations kept per component file, newest first: a few configs (or
/// grant sets) of one package alternating still start warm.
const MAX_DECLARATIONS: usize = 4;

/// The subdirectory of the cache holding package records.
const DIR: &str = "packages";

/// What a record holds.
#[derive(Serialize, Deserialize)]
struct PackageRecord {
    /// The component file's canonical path.
    file: String,
    /// Its stamp when `sha256` was taken.
    stamp: String,
    /// Its sha256 (hex).
    sha256: String,
    /// What it declared under each of its last keys, newest first.
    declarations: Vec<(KeyTag, declarations::Record)>,
}

/// A verified record of a component file whose stamp has not moved.
pub(crate) struct Remembered {
    /// The file's sha256 (hex).
    pub sha256: String,
    declarations: Vec<(KeyTag, declarations::Record)>,
}

impl Remembered {
    /// What was declared under `key` (whose tag is `tag`), if this is a
    /// record of `key`'s content and holds it.
    fn take(self, key: &DeclarationKey, tag: &KeyTag) -> Option<declarations::Record> {
        if self.sha256 != key.sha256 {
            return None;
        }
        let (_, record) = self.declarations.into_iter().find(|(t, _)| t == tag)?;
        Some(record)
    }
}

impl From<PackageRecord> for Remembered {
    fn from(record: PackageRecord) -> Self {
        Self {
            sha256: record.sha256,
            declarations: record.declarations,
        }
    }
}

/// What a package record is sealed for.
const CONTEXT: &[u8] = b"clawhost package record v2\0";

fn record_path(disk: &Disk, file: &str) -> PathBuf {
    disk.dir.join(DIR).join(sha256_hex(file.as_bytes()))
}

/// The record at `path`, if it is `file`'s and verifies.
fn read_record(disk: &Disk, path: &Path, file: &str) -> Option<PackageRecord> {
    let data = crate::owned_path::read_bounded(path, MAX_RECORD).ok()?;
    let record: PackageRecord = sealed::open(disk, path, &data, &[CONTEXT])?;
    (record.file == file && record.sha256.len() == 64).then_some(record)
}

fn write_record(disk: &Disk, path: &Path, record: &PackageRecord) -> anyhow::Result<()> {
    sealed::write(disk, path, &[CONTEXT], record)
}

impl ComponentCache {
    /// What is remembered of `file` (its canonical path, as
    /// `PluginPackage::stamp_component` gives it) at `stamp`, if a record
    /// verifies; the file is not read.
    pub(crate) fn remembered(&self, file: &Path, stamp: &FileStamp) -> Option<Remembered> {
        let disk = self.disk.as_ref()?;
        let file = file.to_string_lossy();
        let record = read_record(disk, &record_path(disk, &file), &file)?;
        (record.stamp == stamp.as_str()).then(|| record.into())
    }

    /// What the plugin declared under `key` (and the component facts its
    /// load checked), if `remembered` holds it.
    pub(crate) fn declaration(
        &self,
        remembered: Remembered,
        key: &DeclarationKey,
    ) -> Option<(Declared, ComponentFacts)> {
        let disk = self.disk.as_ref()?;
        remembered.take(key, &key.tag(disk))?.declared()
    }

    /// The sha256 of `bytes`, read from `file` with `stamp` (`None`: it
    /// changed while read). Taken from a verified record of the same file
    /// and stamp when there is one; otherwise computed and recorded (the
    /// declarations of a record of the same content are kept: a file
    /// touched, not changed).
    pub fn digest(&self, file: &Path, stamp: Option<&FileStamp>, bytes: &[u8]) -> String {
        let (Some(disk), Some(stamp)) = (&self.disk, stamp) else {
            return sha256_hex(bytes);
        };
        let file = owned_path::canonical(file).to_string_lossy().into_owned();
        let path = record_path(disk, &file);
        let old = read_record(disk, &path, &file);
        if let Some(old) = old.as_ref().filter(|r| r.stamp == stamp.as_str()) {
            return old.sha256.clone();
        }
        let sha256 = sha256_hex(bytes);
        let declarations = old
            .filter(|r| r.sha256 == sha256)
            .map(|r| r.declarations)
            .unwrap_or_default();
        let record = PackageRecord {
            file,
            stamp: stamp.as_str().to_string(),
            sha256,
            declarations,
        };
        if let Err(e) = write_record(disk, &path, &record) {
            tracing::debug!(record = %path.display(), error = %e, "could not remember a component digest");
        }
        record.sha256
    }

    /// What the plugin declared under `key`, from the record of `file` (its
    /// canonical path) whatever its stamp (the key pins the content), else
    /// from the record kept under the key itself (the same component at
    /// another path), then copied into `file`'s record for the next start.
    pub(crate) fn remembered_declaration(
        &self,
        file: &Path,
        key: &DeclarationKey,
    ) -> Option<(Declared, ComponentFacts)> {
        let disk = self.disk.as_ref()?;
        let name = file.to_string_lossy();
        let record = read_record(disk, &record_path(disk, &name), &name);
        let found = record.and_then(|r| Remembered::from(r).take(key, &key.tag(disk)));
        let declaration = match found {
            Some(declaration) => declaration,
            None => {
                let declaration = self.declaration_by_key(key)?;
                self.set_declaration(file, key, Some(declaration.clone()));
                declaration
            }
        };
        declaration.declared()
    }

    /// Remember that the plugin declared `declared` under `key`, and the
    /// `facts` its load checked of the component: under the key, and in
    /// the record of `file` (its canonical path, [`Self::set_declaration`]).
    /// Failures are logged: the next start calls `register` again.
    pub(crate) fn remember_declaration(
        &self,
        file: &Path,
        key: &DeclarationKey,
        declared: &Declared,
        facts: &ComponentFacts,
    ) {
        let record = declarations::Record::of(declared, facts);
        self.keep_declaration_by_key(key, Some(&record));
        self.set_declaration(file, key, Some(record));
    }

    /// Forget what was remembered under `key`, in the record of `file` (its
    /// canonical path) and under the key itself, so the next start calls
    /// `register` and checks its answer in full.
    pub(crate) fn forget_declaration(&self, file: &Path, key: &DeclarationKey) {
        self.keep_declaration_by_key(key, None);
        self.set_declaration(file, key, None);
    }

    /// Rewrite the record of `file` (its canonical path) with `record` as
    /// `key`'s declaration, the newest (`None`: without one), when that
    /// record holds `key`'s digest (else the file changed since it was
    /// hashed, and the record is left as it is).
    fn set_declaration(
        &self,
        file: &Path,
        key: &DeclarationKey,
        declaration: Option<declarations::Record>,
    ) {
        let Some(disk) = &self.disk else { return };
        let file = file.to_string_lossy();
        let path = record_path(disk, &file);
        let Some(mut record) = read_record(disk, &path, &file) else {
            tracing::debug!(record = %path.display(), "no record of the component file: its declaration is not remembered");
            return;
        };
        if record.sha256 != key.sha256 {
            tracing::debug!(record = %path.display(), "the component file changed since it was hashed: its declaration is not remembered");
            return;
        }
        let tag = key.tag(disk);
        record.declarations.retain(|(t, _)| *t != tag);
        if let Some(declaration) = declaration {
            record.declarations.insert(0, (tag, declaration));
            record.declarations.truncate(MAX_DECLARATIONS);
        }
        if let Err(e) = write_record(disk, &path, &record) {
            tracing::debug!(record = %path.display(), error = %e, "could not update a package record");
        }
    }
}
