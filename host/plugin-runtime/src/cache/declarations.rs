//! Remembered declarations: what a plugin's `register` answered, keyed by
//! everything the host hands it (component digest, API version, config,
//! grants, host version), with what the load checked of its component
//! ([`ComponentFacts`]), so a warm start offers a plugin's tools and hooks
//! without loading its component or instantiating it. The plugin is
//! instantiated on its first call, where `register` runs again and is
//! compared with the record (see `PluginInstance`).
//!
//! A declaration is kept twice: in its component file's package record
//! ([`super::packages`]), which a warm start reads anyway, and here, in a
//! file of its own named by its key, which finds it for the same component
//! at another path (a package installed, moved or copied). Both are
//! authenticated with the cache's key: a plugin that can write files cannot
//! plant tools or hooks for another one, nor widen its own tool filters.

use std::path::{Path, PathBuf};

use clawhost_hooks::HookKind;
use serde::{Deserialize, Serialize};

use super::{sealed, ComponentCache, Disk};
use crate::abi::{Declared, DeclaredTool};
use crate::api_version::ComponentFacts;

/// Largest record read: 128 tools with their schemas fit many times over.
const MAX_RECORD: u64 = 8 << 20;

/// The subdirectory of the cache holding declarations by key.
const DIR: &str = "declarations";

/// Everything a plugin's registration may depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeclarationKey {
    /// The component's sha256.
    pub sha256: String,
    /// The API version it was built against.
    pub api: &'static str,
    /// The JSON config the plugin receives.
    pub config_json: String,
    /// Its effective grants, as the host resolved them.
    pub grants: String,
}

/// A key's name in a package record: a keyed hash, because the key holds
/// granted env values (a plain hash of them could be guessed at offline).
pub(super) type KeyTag = [u8; 32];

impl DeclarationKey {
    /// This key's [`KeyTag`] under the cache's key.
    pub(super) fn tag(&self, disk: &Disk) -> KeyTag {
        let mut name = blake3::Hasher::new_keyed(&disk.key);
        name.update(b"clawhost declaration name v1\0");
        name.update(self.text().as_bytes());
        *name.finalize().as_bytes()
    }

    /// The bytes its tag covers.
    fn text(&self) -> String {
        format!(
            "clawhost declaration v3\0{}\0{}\0{}\0{}\0{}",
            env!("CARGO_PKG_VERSION"),
            self.sha256,
            self.api,
            self.grants,
            self.config_json
        )
    }
}

/// The on-disk shape of a [`Declared`].
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Record {
    id: Option<String>,
    /// (name, description, JSON Schema text).
    tools: Vec<(String, String, String)>,
    /// (hook name, priority).
    hooks: Vec<(String, i32)>,
    /// (hook name, tool patterns).
    tool_filters: Vec<(String, Vec<String>)>,
    harnesses: Vec<String>,
    /// What the load checked of the component.
    component: ComponentFacts,
}

fn hook(name: &str) -> Option<HookKind> {
    HookKind::from_name(name)
}

impl Record {
    pub(super) fn of(d: &Declared, facts: &ComponentFacts) -> Self {
        Self {
            component: facts.clone(),
            id: d.id.clone(),
            tools: d
                .tools
                .iter()
                .map(|t| (t.name.clone(), t.description.clone(), t.parameters.clone()))
                .collect(),
            hooks: d.hooks.iter().map(|(k, p)| (k.name().into(), *p)).collect(),
            tool_filters: d
                .tool_filters
                .iter()
                .map(|(k, p)| (k.name().into(), p.clone()))
                .collect(),
            harnesses: d.harnesses.clone(),
        }
    }

    pub(super) fn declared(self) -> Option<(Declared, ComponentFacts)> {
        if !self.component.is_well_formed() {
            return None;
        }
        let declared = Declared {
            id: self.id,
            tools: self
                .tools
                .into_iter()
                .map(|(name, description, parameters)| DeclaredTool {
                    name,
                    description,
                    parameters,
                })
                .collect(),
            hooks: self
                .hooks
                .into_iter()
                .map(|(k, p)| Some((hook(&k)?, p)))
                .collect::<Option<_>>()?,
            tool_filters: self
                .tool_filters
                .into_iter()
                .map(|(k, p)| Some((hook(&k)?, p)))
                .collect::<Option<_>>()?,
            harnesses: self.harnesses,
        };
        Some((declared, self.component))
    }
}

/// `declarations/<component sha256>-<key's tag>`: the component's records
/// go when its artifact is evicted.
fn record_path(disk: &Disk, key: &DeclarationKey) -> PathBuf {
    let tag = blake3::Hash::from_bytes(key.tag(disk));
    disk.dir
        .join(DIR)
        .join(format!("{}-{}", key.sha256, tag.to_hex()))
}

/// What a record under a key is sealed for (with the key's tag).
const CONTEXT: &[u8] = b"clawhost declaration record v4\0";

/// Remove every record of the component `sha256` from the cache dir `dir`.
pub(super) fn forget(dir: &Path, sha256: &str) {
    let Ok(entries) = std::fs::read_dir(dir.join(DIR)) else {
        return;
    };
    let prefix = format!("{sha256}-");
    for entry in entries.filter_map(|e| e.ok()) {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl ComponentCache {
    /// The record kept under `key` itself, if it verifies.
    pub(super) fn declaration_by_key(&self, key: &DeclarationKey) -> Option<Record> {
        let disk = self.disk.as_ref()?;
        let tag = key.tag(disk);
        sealed::read(disk, &record_path(disk, key), MAX_RECORD, &[CONTEXT, &tag])
    }

    /// Keep `record` under `key` itself (`None`: remove it). Failures are
    /// logged: the next start calls `register` again.
    pub(super) fn keep_declaration_by_key(&self, key: &DeclarationKey, record: Option<&Record>) {
        let Some(disk) = &self.disk else { return };
        let path = record_path(disk, key);
        let Some(record) = record else {
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::debug!(record = %path.display(), error = %e, "could not forget a declaration");
            }
            return;
        };
        let tag = key.tag(disk);
        if let Err(e) = sealed::write(disk, &path, &[CONTEXT, &tag], record) {
            tracing::debug!(record = %path.display(), error = %e, "could not remember a declaration");
        }
    }
}
