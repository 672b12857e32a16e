//! `plugins install oci://…`: a plugin fetched from an OCI registry into a
//! package directory (its `openclaw.plugin.json` from the manifest
//! annotation, its component as `plugin.wasm`), pinned to the manifest's
//! digest.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use clawhost_oci::{Credentials, Limits, Reference};

/// A plugin fetched into a package directory.
pub struct Fetched {
    /// `oci://registry/repository@sha256:…`: where it came from, pinned.
    pub pinned: String,
    /// The trusted key that signed it, when one did.
    pub signer: Option<String>,
}

/// The credentials for `registry`: `plugins.registries`, else the Docker
/// config file's.
fn credentials_for(config: &clawhost_config::Config, registry: &str) -> Option<Credentials> {
    match config.plugins.registries.get(registry) {
        Some(login) => Some(Credentials {
            username: login.username.clone(),
            password: login.password.clone(),
        }),
        None => Credentials::from_docker_config(registry),
    }
}

/// Whether `source` names a registry rather than a path.
pub fn is_oci(source: &Path) -> bool {
    source.to_string_lossy().starts_with("oci://")
}

/// Fetch the plugin `source` names into `dir` as a package, with the
/// record of its signatures when the registry holds any (checked at load
/// when `config` requires a signature). Credentials come from
/// `plugins.registries`, else the Docker config file; the component is
/// bounded by `plugins.limits`, a silent registry by `timeout`.
pub async fn fetch(
    source: &Path,
    dir: &Path,
    config: &clawhost_config::Config,
    timeout: Duration,
) -> anyhow::Result<Fetched> {
    let reference = Reference::parse(&source.to_string_lossy())?;
    let credentials = credentials_for(config, &reference.registry);
    let limits = Limits {
        max_component_bytes: config
            .plugins
            .limits
            .max_component_mb
            .saturating_mul(1 << 20),
        timeout,
    };
    let pulled = clawhost_oci::pull(&reference, credentials, limits).await?;
    let signatures = pulled.signatures;
    let identity = format!("{}/{}", reference.registry, reference.repository);
    let mut signer = None;
    if !signatures.is_empty() {
        let keys = clawhost_plugin_runtime::trusted_keys(&config.plugins, &config.base_dir)
            .map_err(anyhow::Error::msg)?;
        signer = clawhost_oci::signature::verify(&signatures, &keys, &pulled.digest, &identity)
            .ok()
            .map(|v| v.signer);
        let record = clawhost_plugin_runtime::SignatureRecord {
            identity,
            manifest: base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                &pulled.manifest,
            ),
            signatures,
        };
        std::fs::write(
            dir.join(clawhost_plugin_runtime::SIGNATURE_FILE),
            serde_json::to_vec_pretty(&record)?,
        )
        .with_context(|| format!("writing into {}", dir.display()))?;
    }
    let mut manifest = pulled.plugin_manifest;
    if !manifest.is_object() {
        anyhow::bail!("{reference}: its plugin manifest annotation is not a JSON object");
    }
    // The component is written under one fixed name, whatever the
    // annotation says: a path in it never reaches the file system.
    manifest["component"] = "plugin.wasm".into();
    std::fs::write(dir.join("plugin.wasm"), &pulled.component)
        .with_context(|| format!("writing into {}", dir.display()))?;
    std::fs::write(
        dir.join(clawhost_plugin_runtime::MANIFEST_FILE),
        serde_json::to_vec_pretty(&manifest)?,
    )
    .with_context(|| format!("writing into {}", dir.display()))?;
    Ok(Fetched {
        pinned: reference.pinned(&pulled.digest),
        signer,
    })
}

/// `clawhost plugin publish DIR oci://…:TAG`: push the built package in
/// `dir` to a registry in the Wasm layout (credentials from the Docker
/// config file); prints the reference pinned to the manifest's digest.
pub async fn publish(dir: &Path, target: &str, timeout: Duration) -> anyhow::Result<()> {
    let reference = Reference::parse(target)?;
    let package = clawhost_plugin_runtime::PluginPackage::read(dir)?;
    let component = package.component_path();
    let bytes = std::fs::read(&component).with_context(|| {
        format!(
            "{} has no built component; build it first: clawhost plugin build {}",
            dir.display(),
            dir.display()
        )
    })?;
    let manifest_path = dir.join(clawhost_plugin_runtime::MANIFEST_FILE);
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&manifest_path)
            .with_context(|| format!("reading {}", manifest_path.display()))?,
    )
    .with_context(|| format!("reading {}", manifest_path.display()))?;
    let credentials = Credentials::from_docker_config(&reference.registry);
    let digest = clawhost_oci::push(&reference, credentials, &manifest, &bytes, timeout).await?;
    crate::say!(
        "published {} {} to {reference}",
        package.manifest.id,
        package.manifest.version
    );
    crate::say!("{}", reference.pinned(&digest));
    Ok(())
}

/// For `clawhost plugins update ID`: the pinned reference a plugin
/// installed from a registry moves to (what its tag points to now), or
/// `None` when it is up to date (said so). Nothing moves by itself: the
/// caller installs it, verified and pinned as `plugins install` does.
pub async fn update_target(
    path: &Path,
    id: &str,
    timeout: Duration,
) -> anyhow::Result<Option<String>> {
    let config = clawhost_config::Config::load(path)?;
    let source = config
        .plugins
        .entries
        .get(id)
        .and_then(|e| e.source.clone())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "`{id}` was not installed from a registry (plugins.entries.{id}.source)"
            )
        })?;
    let pinned = Reference::parse(&source)?;
    let by_tag = pinned.by_tag().ok_or_else(|| {
        anyhow::anyhow!("`{id}` is pinned to a digest without a tag ({source}): nothing to move to")
    })?;
    let credentials = credentials_for(&config, &by_tag.registry);
    let now = clawhost_oci::resolve(&by_tag, credentials, timeout).await?;
    if pinned.digest.as_deref() == Some(now.as_str()) {
        crate::say!("{id} is up to date ({source})");
        return Ok(None);
    }
    crate::esay!(
        "{id}: {} → {now}",
        pinned.digest.as_deref().unwrap_or("no digest")
    );
    Ok(Some(by_tag.pinned(&now)))
}

/// Where a loaded plugin came from and who signed it, for `plugins inspect`:
/// `{"source", "signature"}`, the signature `{"signer", "capabilities"}`
/// when it verifies against `plugins.trust`, `{"error"}` when it does not,
/// `null` when the package carries none.
pub fn provenance(
    config: &clawhost_config::Config,
    plugin: &clawhost_plugin_runtime::LoadedPlugin,
) -> serde_json::Value {
    let id = &plugin.manifest().id;
    let entry = config.plugins.entries.get(id);
    let source = entry.and_then(|e| e.source.clone());
    let path = plugin.dir().join(clawhost_plugin_runtime::SIGNATURE_FILE);
    let signature = match std::fs::read(&path) {
        Err(_) => serde_json::Value::Null,
        Ok(bytes) => {
            let checked =
                serde_json::from_slice::<clawhost_plugin_runtime::SignatureRecord>(&bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|record| {
                        let default = clawhost_config::PluginEntry::default();
                        clawhost_plugin_runtime::verify_record(
                            id,
                            &record,
                            &plugin.manifest().capabilities,
                            entry.unwrap_or(&default),
                            &config.plugins,
                            &config.base_dir,
                        )
                        .map_err(|e| match e {
                            clawhost_plugin_runtime::LoadError::Signature { reason, .. } => reason,
                            other => other.to_string(),
                        })
                    });
            match checked {
                Ok(signed) => serde_json::json!({
                    "signer": signed.signer,
                    "capabilities": signed.capabilities,
                }),
                Err(error) => serde_json::json!({"error": error}),
            }
        }
    };
    serde_json::json!({"source": source, "signature": signature})
}
