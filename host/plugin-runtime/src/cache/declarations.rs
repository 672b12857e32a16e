//! Remembered declarations: what a plugin's `register` answered, keyed by
//! everything the host hands it (component digest, API version, config,
//! grants, host version), with what the load checked of its component
//! ([`ComponentFacts`]), so a warm start offers a plugin's tools and hooks
//! without loading its component or instantiating it. The plugin is instantiated on its first call,
//! where `register` runs again and is compared with the record (see
//! `PluginInstance`). A record is authenticated with the cache's key (keyed
//! BLAKE3): a plugin that can write files cannot plant tools or hooks for
//! another one, nor widen its own tool filters.

use std::io::Write;
use std::path::{Path, PathBuf};

use clawhost_hooks::HookKind;
use serde::{Deserialize, Serialize};

use super::{ComponentCache, Disk, TAG_LEN};
use crate::abi::{Declared, DeclaredTool};
use crate::api_version::ComponentFacts;
use crate::owned_path;

/// Largest record read: 128 tools with their schemas fit many times over.
const MAX_RECORD: u64 = 8 << 20;

/// The subdirectory of the cache holding declaration records.
pub(super) const DIR: &str = "declarations";

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

impl DeclarationKey {
    /// The bytes the record's name and tag cover.
    fn text(&self) -> String {
        format!(
            "clawhost declaration v2\0{}\0{}\0{}\0{}\0{}",
            env!("CARGO_PKG_VERSION"),
            self.sha256,
            self.api,
            self.grants,
            self.config_json
        )
    }
}

/// The on-disk shape of a [`Declared`].
#[derive(Serialize, Deserialize)]
struct Record {
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
    HookKind::ALL.into_iter().find(|k| k.name() == name)
}

impl Record {
    fn of(d: &Declared, facts: &ComponentFacts) -> Self {
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

    fn declared(self) -> Option<(Declared, ComponentFacts)> {
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

fn tag(disk: &Disk, key: &str, body: &[u8]) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(&disk.key);
    mac.update(key.as_bytes());
    mac.update(b"\0");
    mac.update(body);
    mac.finalize()
}

/// `declarations/<component sha256>-<keyed hash of the key>`: the
/// component's records go when its artifact is evicted. The hash is keyed
/// because the key holds granted env values: a plain hash of them could be
/// guessed at offline.
fn record_path(disk: &Disk, key: &DeclarationKey, text: &str) -> PathBuf {
    let mut name = blake3::Hasher::new_keyed(&disk.key);
    name.update(b"clawhost declaration name v1\0");
    name.update(text.as_bytes());
    disk.dir
        .join(DIR)
        .join(format!("{}-{}", key.sha256, name.finalize().to_hex()))
}

/// Remove every record of the component `sha256`.
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
    /// What the plugin declared under `key` and what the load checked of
    /// its component, if a record verifies.
    pub(crate) fn remembered_declaration(
        &self,
        key: &DeclarationKey,
    ) -> Option<(Declared, ComponentFacts)> {
        let disk = self.disk.as_ref()?;
        let text = key.text();
        let data = owned_path::read_bounded(&record_path(disk, key, &text), MAX_RECORD).ok()?;
        let (mac, body) = data.split_at_checked(2 * TAG_LEN + 1)?;
        let mac: [u8; TAG_LEN] = hex::decode(&mac[..2 * TAG_LEN]).ok()?.try_into().ok()?;
        // `blake3::Hash`'s equality is constant-time.
        if tag(disk, &text, body) != blake3::Hash::from_bytes(mac) {
            tracing::warn!(sha256 = %key.sha256, "a declaration record does not verify; calling register");
            return None;
        }
        serde_json::from_slice::<Record>(body).ok()?.declared()
    }

    /// Forget what was remembered under `key`, so the next start calls
    /// `register` and checks its answer in full.
    pub(crate) fn forget_declaration(&self, key: &DeclarationKey) {
        let Some(disk) = &self.disk else { return };
        let path = record_path(disk, key, &key.text());
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::debug!(record = %path.display(), error = %e, "could not forget a declaration");
        }
    }

    /// Remember that the plugin declared `declared` under `key`, and the
    /// `facts` its load checked of the component; failures are logged (the
    /// next start calls `register` again).
    pub(crate) fn remember_declaration(
        &self,
        key: &DeclarationKey,
        declared: &Declared,
        facts: &ComponentFacts,
    ) {
        let Some(disk) = &self.disk else { return };
        let text = key.text();
        let path = record_path(disk, key, &text);
        let write = || -> anyhow::Result<()> {
            let dir = path.parent().expect("a record path has a parent");
            owned_path::private_dir(dir)?;
            let body = serde_json::to_vec(&Record::of(declared, facts))?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            writeln!(tmp, "{}", tag(disk, &text, &body).to_hex())?;
            tmp.write_all(&body)?;
            tmp.persist(&path)?;
            Ok(())
        };
        if let Err(e) = write() {
            tracing::debug!(record = %path.display(), error = %e, "could not remember a declaration");
        }
    }
}
