//! Signed plugins: when the operator requires a signature
//! (`plugins.requireSignature`, or the entry's), a package must carry the
//! record `plugins install` wrote from the registry ([`SIGNATURE_FILE`]):
//! the OCI manifest and its cosign signatures. At every load the record is
//! verified against the trusted keys, the manifest's component digest
//! against the config's sha256 pin (which the component itself is checked
//! against), and the plugin's requested capabilities and the operator's
//! grants against the capabilities the publisher signed.

use std::path::Path;

use base64::Engine;
use clawhost_config::{Access, EnvGrant, PluginEntry, PluginsConfig};
use clawhost_oci::signature::{self, SignatureBlob, TrustedKey};
use serde::{Deserialize, Serialize};

use crate::manifest::RequestedCapabilities;
use crate::LoadError;

/// The file beside a package's manifest holding its signature record.
pub const SIGNATURE_FILE: &str = "signature.json";

/// What `plugins install` keeps of a registry plugin's signatures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignatureRecord {
    /// `registry/repository`, as the signatures name it.
    pub identity: String,
    /// The OCI image manifest (base64), whose digest the signatures sign.
    pub manifest: String,
    /// The cosign signatures stored for it.
    pub signatures: Vec<SignatureBlob>,
}

/// The keys `plugins.trust` names (a `keyFile` read from `base`), parsed.
pub fn trusted_keys(config: &PluginsConfig, base: &Path) -> Result<Vec<TrustedKey>, String> {
    config
        .trusted_pems(base)?
        .iter()
        .map(|(name, pem)| TrustedKey::from_pem(name, pem))
        .collect()
}

/// Who signed a plugin, and what they signed it may be given.
#[derive(Debug, Clone)]
pub struct SignedBy {
    /// The trusted key's name in `plugins.trust`.
    pub signer: String,
    /// The capabilities the publisher signed (the manifest's shape).
    pub capabilities: serde_json::Value,
}

/// Verify `record` for plugin `id` (requested `capabilities`, operator
/// `entry`) against the trusted keys of `config`: who signed it and what.
pub fn verify_record(
    id: &str,
    record: &SignatureRecord,
    capabilities: &RequestedCapabilities,
    entry: &PluginEntry,
    config: &PluginsConfig,
    base: &Path,
) -> Result<SignedBy, LoadError> {
    let fail = |reason: String| LoadError::Signature {
        id: id.into(),
        reason,
    };
    let keys = trusted_keys(config, base).map_err(&fail)?;
    if keys.is_empty() {
        return Err(fail(
            "plugins.trust names no key to check it against".into(),
        ));
    }
    let manifest = base64::engine::general_purpose::STANDARD
        .decode(&record.manifest)
        .map_err(|e| fail(format!("its record's manifest is not base64: {e}")))?;
    let digest = clawhost_oci::sha256_digest(&manifest);
    let verified =
        signature::verify(&record.signatures, &keys, &digest, &record.identity).map_err(&fail)?;
    let doc: serde_json::Value = serde_json::from_slice(&manifest)
        .map_err(|e| fail(format!("its signed manifest is not JSON: {e}")))?;
    let layer = doc["layers"][0]["digest"].as_str().unwrap_or_default();
    let pinned = entry
        .sha256
        .as_deref()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if pinned.is_empty() || layer != format!("sha256:{pinned}") {
        return Err(fail(format!(
            "the signed component is {layer}, and plugins.entries.{id}.sha256 does not pin it"
        )));
    }
    // What the publisher declared: the payload's capabilities, else those
    // of the plugin manifest in the signed OCI manifest.
    let declared = match verified.capabilities {
        Some(caps) => caps,
        None => doc["annotations"][clawhost_oci::PLUGIN_MANIFEST_ANNOTATION]
            .as_str()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .map(|m| m["capabilities"].clone())
            .unwrap_or_default(),
    };
    let signed: RequestedCapabilities = if declared.is_null() {
        RequestedCapabilities::default()
    } else {
        serde_json::from_value(declared.clone())
            .map_err(|e| fail(format!("the signed capabilities are not capabilities: {e}")))?
    };
    if let Some(what) = beyond(capabilities, entry, &signed) {
        return Err(fail(format!(
            "{what}, beyond what its publisher signed (signed by `{}`)",
            verified.signer
        )));
    }
    Ok(SignedBy {
        signer: verified.signer,
        capabilities: declared,
    })
}

/// The first request or grant `declared` does not cover, said plainly.
fn beyond(
    requested: &RequestedCapabilities,
    entry: &PluginEntry,
    declared: &RequestedCapabilities,
) -> Option<String> {
    let dir = |guest: &str, access: Access| {
        declared.filesystem.iter().any(|d| {
            d.guest_path == guest && (access == Access::ReadOnly || d.access == Access::ReadWrite)
        })
    };
    if let Some(d) = requested
        .filesystem
        .iter()
        .find(|d| !dir(&d.guest_path, d.access))
    {
        return Some(format!(
            "it asks for the directory {} ({:?})",
            d.guest_path, d.access
        ));
    }
    if let Some(g) = entry
        .grants
        .filesystem
        .iter()
        .find(|g| !dir(&g.guest_path, g.access))
    {
        return Some(format!(
            "plugins.entries.<id>.grants gives it {} ({:?})",
            g.guest_path, g.access
        ));
    }
    let env_ok = |name: &str| declared.env.iter().any(|e| e == name);
    if let Some(name) = requested.env.iter().find(|n| !env_ok(n)) {
        return Some(format!("it asks to read ${name}"));
    }
    for grant in &entry.grants.env {
        let name = match grant {
            EnvGrant::Inherit(name) | EnvGrant::Fixed { name, .. } => name,
        };
        if !env_ok(name) {
            return Some(format!("plugins.entries.<id>.grants gives it ${name}"));
        }
    }
    if (requested.harness || entry.grants.harness) && !declared.harness {
        return Some("it would run as an agent runtime (harness)".into());
    }
    let process_ok = |name: &str| declared.processes.iter().any(|p| p == name);
    if let Some(name) = requested
        .processes
        .iter()
        .chain(entry.grants.processes.keys())
        .find(|n| !process_ok(n))
    {
        return Some(format!("it would open the process `{name}`"));
    }
    None
}

/// When plugin `id` must be signed, verify the record in `package_dir`.
pub fn check_signature(
    id: &str,
    package_dir: &Path,
    capabilities: &RequestedCapabilities,
    config: &PluginsConfig,
    base: &Path,
) -> Result<(), LoadError> {
    if !config.requires_signature(id) {
        return Ok(());
    }
    let path = package_dir.join(SIGNATURE_FILE);
    let text = std::fs::read(&path).map_err(|_| LoadError::Signature {
        id: id.into(),
        reason: format!(
            "a signature is required and {} has none (install it from a registry that holds its signature)",
            path.display()
        ),
    })?;
    let record: SignatureRecord =
        serde_json::from_slice(&text).map_err(|e| LoadError::Signature {
            id: id.into(),
            reason: format!("{}: {e}", path.display()),
        })?;
    let entry = crate::admission::entry(config, id);
    verify_record(id, &record, capabilities, entry, config, base).map(|_| ())
}
