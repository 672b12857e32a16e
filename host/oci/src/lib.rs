//! Plugins from OCI registries. A plugin is stored in the layout the WASM
//! ecosystem uses for components (the CNCF Wasm OCI artifact: an OCI image
//! manifest whose config is `application/vnd.wasm.config.v0+json` and whose
//! one layer is the `application/wasm` component), with the plugin's
//! `openclaw.plugin.json` in the manifest annotation
//! `org.openclaw.plugin.manifest`. [`pull`] fetches one over the
//! distribution API: every size is bounded before it is read, each byte
//! checked against its digest, and the manifest's digest returned as the pin;
//! [`push`] stores one in that layout.

mod credentials;
mod reference;
mod registry;
pub mod signature;

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use sha2::{Digest, Sha256};

pub use credentials::Credentials;
pub use reference::Reference;

/// The config media type of a Wasm artifact.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The layer media type of a Wasm component.
pub const WASM_LAYER: &str = "application/wasm";
/// The OCI image manifest media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI image index media type (several manifests: refused).
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// The manifest annotation holding the plugin's `openclaw.plugin.json`.
pub const PLUGIN_MANIFEST_ANNOTATION: &str = "org.openclaw.plugin.manifest";
/// Largest image manifest read.
const MAX_MANIFEST_BYTES: usize = 4 << 20;

/// Why a plugin could not be fetched from a registry.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The reference is not `oci://registry/repository:tag` or `@sha256:…`.
    #[error("`{reference}` is not a plugin reference: {why}")]
    Reference {
        /// The text given.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// The registry could not be reached or answered wrongly.
    #[error("registry {registry}: {why}")]
    Registry {
        /// `host[:port]`.
        registry: String,
        /// What happened.
        why: String,
    },
    /// The registry wants credentials it was not given or refused them.
    #[error("registry {registry} refused access: {why}")]
    Unauthorized {
        /// `host[:port]`.
        registry: String,
        /// What it said.
        why: String,
    },
    /// No such manifest or blob.
    #[error("not found: {what}")]
    NotFound {
        /// What was asked for.
        what: String,
    },
    /// The artifact is not a plugin in the Wasm layout.
    #[error("{reference} is not a clawhost plugin artifact: {why}")]
    Layout {
        /// The reference.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// Something is larger than allowed; nothing past the bound was read.
    #[error("{what} is {bytes} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// What it is.
        what: String,
        /// Its size (declared, or read so far).
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// Content does not match the digest that names it.
    #[error("{what}: the content's digest is {actual}, not {expected}")]
    DigestMismatch {
        /// What it is.
        what: String,
        /// The digest asked for.
        expected: String,
        /// The digest of what came.
        actual: String,
    },
}

/// Bounds of one pull.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest component accepted.
    pub max_component_bytes: u64,
    /// How long the registry may stay silent (connect, or between reads).
    pub timeout: Duration,
}

/// A plugin fetched from a registry.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The image manifest's digest (`sha256:…`): the pin.
    pub digest: String,
    /// The image manifest, as the registry sent it (its sha256 is `digest`).
    pub manifest: Vec<u8>,
    /// The plugin's `openclaw.plugin.json`, from the manifest annotation.
    pub plugin_manifest: Value,
    /// The component's bytes (checked against the layer's digest).
    pub component: Vec<u8>,
    /// The cosign signatures stored for the manifest (none when the
    /// registry holds no `sha256-….sig` artifact for it).
    pub signatures: Vec<signature::SignatureBlob>,
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Fetch the plugin at `reference`: its manifest (pinned to the digest when
/// the reference names one), checked to be the Wasm layout with one
/// component, then the component within `limits`, and the signatures
/// stored for the manifest.
pub async fn pull(
    reference: &Reference,
    credentials: Option<Credentials>,
    limits: Limits,
) -> Result<Pulled, OciError> {
    let registry = registry::Registry::new(reference, credentials, limits.timeout)?;
    let bytes = manifest_of(&registry, reference).await?;
    let digest = sha256_digest(&bytes);
    if let Some(expected) = &reference.digest {
        if *expected != digest {
            return Err(OciError::DigestMismatch {
                what: format!("the manifest of {reference}"),
                expected: expected.clone(),
                actual: digest,
            });
        }
    }
    let layout = |why: String| OciError::Layout {
        reference: reference.to_string(),
        why,
    };
    let manifest: Value = serde_json::from_slice(&bytes)
        .map_err(|e| layout(format!("its manifest is not JSON: {e}")))?;
    let layer = wasm_layer(&manifest).map_err(layout)?;
    let size = layer["size"].as_u64().unwrap_or(u64::MAX);
    if size > limits.max_component_bytes {
        return Err(OciError::TooLarge {
            what: format!("the component of {reference}"),
            bytes: size,
            limit: limits.max_component_bytes,
        });
    }
    let plugin_manifest = manifest["annotations"][PLUGIN_MANIFEST_ANNOTATION]
        .as_str()
        .ok_or_else(|| {
            layout(format!(
                "its manifest has no `{PLUGIN_MANIFEST_ANNOTATION}` annotation (the plugin's openclaw.plugin.json; `clawhost plugin publish` writes it, oras takes it as --annotation)"
            ))
        })
        .and_then(|text| {
            serde_json::from_str::<Value>(text)
                .map_err(|e| layout(format!("its `{PLUGIN_MANIFEST_ANNOTATION}` is not JSON: {e}")))
        })?;
    let layer_digest = layer["digest"]
        .as_str()
        .filter(|d| d.starts_with("sha256:"))
        .ok_or_else(|| layout("its layer has no sha256 digest".into()))?
        .to_string();
    let what = format!("the component of {reference}");
    let component = blob(&registry, reference, &layer_digest, size, &what).await?;
    let signatures = signatures_of(&registry, reference, &digest).await?;
    Ok(Pulled {
        digest,
        manifest: bytes,
        plugin_manifest,
        component,
        signatures,
    })
}

/// Largest signature payload read.
const MAX_PAYLOAD_BYTES: u64 = 64 << 10;
/// Most signatures read for one manifest.
const MAX_SIGNATURES: usize = 16;

/// The cosign signatures stored for the manifest `digest` in `reference`'s
/// repository (none when there is no `sha256-….sig` artifact), each payload
/// checked against its digest.
async fn signatures_of(
    registry: &registry::Registry,
    reference: &Reference,
    digest: &str,
) -> Result<Vec<signature::SignatureBlob>, OciError> {
    let tag = signature::signature_tag(digest);
    let what = format!("the signature manifest {tag}");
    let bytes = match manifest_at(registry, reference, &tag, OCI_MANIFEST, &what).await {
        Ok(bytes) => bytes,
        Err(OciError::NotFound { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let manifest: Value = serde_json::from_slice(&bytes).map_err(|e| OciError::Layout {
        reference: format!("{reference} ({tag})"),
        why: format!("its signature manifest is not JSON: {e}"),
    })?;
    let layers: Vec<&Value> = manifest["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|layer| layer["mediaType"] == signature::SIGNATURE_LAYER)
        .collect();
    if layers.len() > MAX_SIGNATURES {
        return Err(OciError::Layout {
            reference: format!("{reference} ({tag})"),
            why: format!(
                "it lists {} signatures; at most {MAX_SIGNATURES} are read",
                layers.len()
            ),
        });
    }
    let mut found = Vec::new();
    for layer in layers {
        let (Some(layer_digest), Some(sig)) = (
            layer["digest"].as_str(),
            layer["annotations"][signature::SIGNATURE_ANNOTATION].as_str(),
        ) else {
            continue;
        };
        let size = layer["size"].as_u64().unwrap_or(u64::MAX);
        let what = format!("a signature payload of {reference}");
        if size > MAX_PAYLOAD_BYTES {
            return Err(OciError::TooLarge {
                what,
                bytes: size,
                limit: MAX_PAYLOAD_BYTES,
            });
        }
        let payload = blob(registry, reference, layer_digest, size, &what).await?;
        use base64::Engine;
        found.push(signature::SignatureBlob {
            payload: base64::engine::general_purpose::STANDARD.encode(&payload),
            signature: sig.to_string(),
        });
    }
    Ok(found)
}

/// The digest of the manifest `reference` names now (what its tag points
/// to).
pub async fn resolve(
    reference: &Reference,
    credentials: Option<Credentials>,
    timeout: Duration,
) -> Result<String, OciError> {
    let registry = registry::Registry::new(reference, credentials, timeout)?;
    let bytes = manifest_of(&registry, reference).await?;
    Ok(sha256_digest(&bytes))
}

/// Push a plugin (its `openclaw.plugin.json` as `plugin_manifest`, its
/// component) to `reference`'s tag in the Wasm layout [`pull`] reads; the
/// manifest's digest. The same plugin always makes the same manifest.
pub async fn push(
    reference: &Reference,
    credentials: Option<Credentials>,
    plugin_manifest: &Value,
    component: &[u8],
    timeout: Duration,
) -> Result<String, OciError> {
    let tag = match (&reference.tag, &reference.digest) {
        (Some(tag), None) => tag.clone(),
        _ => {
            return Err(OciError::Reference {
                reference: reference.to_string(),
                why: "publish to a tag (oci://host/name:1.0), not a digest".into(),
            })
        }
    };
    let registry = registry::Registry::new(reference, credentials, timeout)?;
    let layer_digest = sha256_digest(component);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
    }))
    .map_err(|e| OciError::Layout {
        reference: reference.to_string(),
        why: e.to_string(),
    })?;
    let config_digest = sha256_digest(&config);
    for (digest, body) in [
        (&config_digest, bytes::Bytes::from(config.clone())),
        (&layer_digest, bytes::Bytes::copy_from_slice(component)),
    ] {
        if !registry.has_blob(digest).await? {
            registry.put_blob(digest, body).await?;
        }
    }
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": WASM_CONFIG, "digest": config_digest, "size": config.len()},
        "layers": [{
            "mediaType": WASM_LAYER,
            "digest": layer_digest,
            "size": component.len(),
            "annotations": {"org.opencontainers.image.title": "plugin.wasm"},
        }],
        "annotations": {PLUGIN_MANIFEST_ANNOTATION: plugin_manifest.to_string()},
    });
    let manifest = serde_json::to_vec(&manifest).map_err(|e| OciError::Layout {
        reference: reference.to_string(),
        why: e.to_string(),
    })?;
    let digest = sha256_digest(&manifest);
    registry.put_manifest(&tag, manifest.into()).await?;
    Ok(digest)
}

/// The image manifest `reference` names, as the registry sends it (bounded).
async fn manifest_of(
    registry: &registry::Registry,
    reference: &Reference,
) -> Result<Vec<u8>, OciError> {
    let accept = format!("{OCI_MANIFEST}, {OCI_INDEX}");
    manifest_at(
        registry,
        reference,
        reference.target(),
        &accept,
        "the manifest",
    )
    .await
}

/// The manifest under `target` (a tag or digest) in `reference`'s
/// repository, read up to [`MAX_MANIFEST_BYTES`].
async fn manifest_at(
    registry: &registry::Registry,
    reference: &Reference,
    target: &str,
    accept: &str,
    what: &str,
) -> Result<Vec<u8>, OciError> {
    let response = registry.get("manifests", target, accept).await?;
    read_bounded(
        response,
        what,
        MAX_MANIFEST_BYTES as u64,
        &reference.registry,
    )
    .await
}

/// The blob `digest` of `size` bytes (`what` it is, for errors): nothing
/// past `size` is read, and the bytes are checked against the digest.
async fn blob(
    registry: &registry::Registry,
    reference: &Reference,
    digest: &str,
    size: u64,
    what: &str,
) -> Result<Vec<u8>, OciError> {
    let response = registry.get("blobs", digest, "*/*").await?;
    let bytes = read_bounded(response, what, size, &reference.registry).await?;
    let actual = sha256_digest(&bytes);
    if actual != digest {
        return Err(OciError::DigestMismatch {
            what: what.into(),
            expected: digest.into(),
            actual,
        });
    }
    Ok(bytes)
}

/// The one `application/wasm` layer of a Wasm artifact's manifest, or why
/// it is not one.
fn wasm_layer(manifest: &Value) -> Result<&Value, String> {
    match manifest["mediaType"].as_str() {
        None | Some(OCI_MANIFEST) => {}
        Some(OCI_INDEX) => {
            return Err(
                "it is an image index (several manifests); name one manifest by its digest".into(),
            )
        }
        Some(other) => {
            return Err(format!(
                "its manifest's media type is `{other}`, not {OCI_MANIFEST}"
            ))
        }
    }
    let config = manifest["config"]["mediaType"].as_str().unwrap_or_default();
    if config != WASM_CONFIG {
        return Err(format!(
            "its config's media type is `{config}`, not {WASM_CONFIG}"
        ));
    }
    let layers = manifest["layers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    match layers {
        [layer] if layer["mediaType"] == WASM_LAYER => Ok(layer),
        [layer] => Err(format!(
            "its layer's media type is `{}`, not {WASM_LAYER}",
            layer["mediaType"].as_str().unwrap_or_default()
        )),
        [] => Err("it has no layer".into()),
        many => Err(format!(
            "it has {} layers; a plugin is one {WASM_LAYER} layer",
            many.len()
        )),
    }
}

/// A response's body, refused once it passes `limit` bytes (nothing past the
/// bound is read).
async fn read_bounded(
    response: reqwest::Response,
    what: &str,
    limit: u64,
    registry: &str,
) -> Result<Vec<u8>, OciError> {
    if let Some(length) = response.content_length() {
        if length > limit {
            return Err(OciError::TooLarge {
                what: what.into(),
                bytes: length,
                limit,
            });
        }
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| OciError::Registry {
            registry: registry.into(),
            why: if e.is_timeout() {
                format!("{what}: no data in time (the registry stalled)")
            } else {
                format!("{what}: {e}")
            },
        })?;
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(OciError::TooLarge {
                what: what.into(),
                bytes: body.len() as u64 + chunk.len() as u64,
                limit,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn artifact(config: &str, layers: Value) -> Value {
        json!({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
               "config": {"mediaType": config, "digest": "sha256:00", "size": 2},
               "layers": layers})
    }

    #[test]
    fn only_the_wasm_layout_with_one_component_is_a_plugin() {
        let wasm = json!({"mediaType": WASM_LAYER, "digest": "sha256:11", "size": 3});
        assert!(wasm_layer(&artifact(WASM_CONFIG, json!([wasm]))).is_ok());
        let two = wasm_layer(&artifact(WASM_CONFIG, json!([wasm, wasm]))).unwrap_err();
        assert!(two.contains("2 layers"), "{two}");
        let other = json!({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": "sha256:11", "size": 3});
        let e = wasm_layer(&artifact(WASM_CONFIG, json!([other]))).unwrap_err();
        assert!(e.contains("tar+gzip"), "{e}");
        let e = wasm_layer(&artifact(
            "application/vnd.oci.image.config.v1+json",
            json!([wasm]),
        ))
        .unwrap_err();
        assert!(e.contains("config"), "{e}");
        let e = wasm_layer(&json!({"mediaType": OCI_INDEX, "manifests": []})).unwrap_err();
        assert!(e.contains("index"), "{e}");
    }
}
