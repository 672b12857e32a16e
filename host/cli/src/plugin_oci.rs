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
}

/// Whether `source` names a registry rather than a path.
pub fn is_oci(source: &Path) -> bool {
    source.to_string_lossy().starts_with("oci://")
}

/// Fetch the plugin `source` names into `dir` as a package. Credentials
/// come from the Docker config file; the component is bounded by
/// `max_component_bytes`, a silent registry by `timeout`.
pub async fn fetch(
    source: &Path,
    dir: &Path,
    max_component_bytes: u64,
    timeout: Duration,
) -> anyhow::Result<Fetched> {
    let reference = Reference::parse(&source.to_string_lossy())?;
    let credentials = Credentials::from_docker_config(&reference.registry);
    let limits = Limits {
        max_component_bytes,
        timeout,
    };
    let pulled = clawhost_oci::pull(&reference, credentials, limits).await?;
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
    })
}
