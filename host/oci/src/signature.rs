//! Cosign key-pair signatures ("simple signing"), verified offline against
//! keys the operator trusts. A signature is an OCI artifact tagged
//! `sha256-<digest>.sig` beside the plugin; each layer is a payload naming
//! the signed manifest's digest (`critical.image.docker-manifest-digest`)
//! and repository, signed with ECDSA P-256 over SHA-256 (the base64 DER
//! signature in the layer's `dev.cosignproject.cosign/signature`
//! annotation). The payload's `optional` annotations may carry the
//! capabilities the publisher declared (`org.openclaw.capabilities`).

use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{DerSignature, VerifyingKey};
use p256::pkcs8::DecodePublicKey;
use serde_json::Value;

/// The media type of a cosign simple-signing payload layer.
pub const SIGNATURE_LAYER: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload annotation with the capabilities the publisher declared.
pub const CAPABILITIES_ANNOTATION: &str = "org.openclaw.capabilities";

/// A public key the operator trusts, by the name it is configured under.
#[derive(Clone)]
pub struct TrustedKey {
    /// The name in `plugins.trust`.
    pub name: String,
    key: VerifyingKey,
}

impl std::fmt::Debug for TrustedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustedKey")
            .field("name", &self.name)
            .finish()
    }
}

impl TrustedKey {
    /// An ECDSA P-256 public key in PEM (`-----BEGIN PUBLIC KEY-----`, as
    /// `cosign generate-key-pair` and `openssl ec -pubout` write it).
    pub fn from_pem(name: &str, pem: &str) -> Result<Self, String> {
        let key = VerifyingKey::from_public_key_pem(pem.trim()).map_err(|e| {
            format!("trusted key `{name}` is not an ECDSA P-256 public key in PEM: {e}")
        })?;
        Ok(Self {
            name: name.into(),
            key,
        })
    }
}

/// One signature as stored: the payload and its base64 signature.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignatureBlob {
    /// The simple-signing payload, as signed (base64).
    pub payload: String,
    /// The base64 DER signature.
    pub signature: String,
}

/// A signature that verified.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The trusted key's name.
    pub signer: String,
    /// The capabilities the publisher declared, if the payload carries them.
    pub capabilities: Option<Value>,
}

/// The tag cosign stores the signatures of `digest` under.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

/// The first of `blobs` signed by one of `keys` for `digest` in `identity`
/// (`registry/repository`), or why none is.
pub fn verify(
    blobs: &[SignatureBlob],
    keys: &[TrustedKey],
    digest: &str,
    identity: &str,
) -> Result<Verified, String> {
    if blobs.is_empty() {
        return Err(format!(
            "no signature of {digest} is stored ({})",
            signature_tag(digest)
        ));
    }
    let mut why = Vec::new();
    for blob in blobs {
        match verify_one(blob, keys, digest, identity) {
            Ok(v) => return Ok(v),
            Err(e) => why.push(e),
        }
    }
    Err(why.join("; "))
}

fn verify_one(
    blob: &SignatureBlob,
    keys: &[TrustedKey],
    digest: &str,
    identity: &str,
) -> Result<Verified, String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let payload = b64
        .decode(&blob.payload)
        .map_err(|e| format!("a payload is not base64: {e}"))?;
    let signature = b64
        .decode(blob.signature.trim())
        .map_err(|e| format!("a signature is not base64: {e}"))?;
    let signature = DerSignature::from_bytes(&signature)
        .map_err(|e| format!("a signature is not an ECDSA DER signature: {e}"))?;
    let signer = keys
        .iter()
        .find(|k| k.key.verify(&payload, &signature).is_ok())
        .ok_or("a signature verifies with no trusted key (plugins.trust)")?;
    let doc: Value = serde_json::from_slice(&payload)
        .map_err(|e| format!("a signed payload is not JSON: {e}"))?;
    let signed = doc["critical"]["image"]["docker-manifest-digest"]
        .as_str()
        .unwrap_or_default();
    if signed != digest {
        return Err(format!(
            "a signature by `{}` is for {signed}, not {digest}",
            signer.name
        ));
    }
    let reference = doc["critical"]["identity"]["docker-reference"]
        .as_str()
        .unwrap_or_default();
    if reference != identity {
        return Err(format!(
            "a signature by `{}` is for the repository {reference}, not {identity}",
            signer.name
        ));
    }
    let capabilities = match &doc["optional"][CAPABILITIES_ANNOTATION] {
        Value::String(text) => Some(
            serde_json::from_str(text)
                .map_err(|e| format!("the signed {CAPABILITIES_ANNOTATION} is not JSON: {e}"))?,
        ),
        Value::Null => None,
        other => Some(other.clone()),
    };
    Ok(Verified {
        signer: signer.name.clone(),
        capabilities,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::SigningKey;
    use p256::pkcs8::{EncodePublicKey, LineEnding};

    fn keypair(seed: u8) -> (SigningKey, TrustedKey) {
        let signing = SigningKey::from_slice(&[seed; 32]).unwrap();
        let pem = signing
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        (
            signing,
            TrustedKey::from_pem(&format!("k{seed}"), &pem).unwrap(),
        )
    }

    fn blob(signing: &SigningKey, payload: &Value) -> SignatureBlob {
        let bytes = payload.to_string().into_bytes();
        let signature: DerSignature = signing.sign(&bytes);
        let b64 = base64::engine::general_purpose::STANDARD;
        SignatureBlob {
            payload: b64.encode(&bytes),
            signature: b64.encode(signature.as_bytes()),
        }
    }

    #[test]
    fn a_signature_verifies_only_for_its_key_digest_and_repository() {
        let (signing, trusted) = keypair(7);
        let (_, other) = keypair(9);
        let digest = format!("sha256:{}", "a".repeat(64));
        let payload = serde_json::json!({
            "critical": {"identity": {"docker-reference": "reg/p"},
                         "image": {"docker-manifest-digest": digest},
                         "type": "cosign container image signature"},
            "optional": {CAPABILITIES_ANNOTATION: "{\"env\": [\"HOME\"]}"}
        });
        let good = blob(&signing, &payload);
        let goods = std::slice::from_ref(&good);
        let trusteds = std::slice::from_ref(&trusted);
        let v = verify(goods, trusteds, &digest, "reg/p").unwrap();
        assert_eq!(v.signer, "k7");
        assert_eq!(v.capabilities.unwrap()["env"][0], "HOME");
        let e = verify(goods, &[other], &digest, "reg/p").unwrap_err();
        assert!(e.contains("no trusted key"), "{e}");
        let elsewhere = format!("sha256:{}", "b".repeat(64));
        let e = verify(goods, trusteds, &elsewhere, "reg/p").unwrap_err();
        assert!(e.contains("is for"), "{e}");
        let e = verify(goods, trusteds, &digest, "reg/q").unwrap_err();
        assert!(e.contains("repository"), "{e}");
        // A payload changed after signing does not verify.
        let mut tampered = good.clone();
        let mut changed = payload;
        changed["optional"][CAPABILITIES_ANNOTATION] =
            "{\"env\": [\"HOME\", \"AWS_SECRET\"]}".into();
        tampered.payload = base64::engine::general_purpose::STANDARD.encode(changed.to_string());
        let e = verify(&[tampered], trusteds, &digest, "reg/p").unwrap_err();
        assert!(e.contains("no trusted key"), "{e}");
        let none = verify(&[], trusteds, &digest, "reg/p").unwrap_err();
        assert!(none.contains(".sig"), "{none}");
    }
}
