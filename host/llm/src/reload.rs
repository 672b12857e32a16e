//! What a reload depends on: the config file's bytes and which credentials
//! are present. A watcher compares fingerprints and reloads on a change
//! (the CLI's `chat`); the reload itself belongs to the agent host.

use std::path::Path;

use clawhost_config::Config;

use crate::auth::AuthTemplate;

/// The config file's bytes and, per configured provider, whether its
/// credentials are present (discovery only: no registry, no HTTP client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    bytes: Vec<u8>,
    auth: Vec<bool>,
}

/// The fingerprint of the config at `path` now; `None` when it cannot be read.
pub fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let bytes = std::fs::read(path).ok()?;
    let auth = Config::load(path)
        .map(|c| {
            c.models
                .providers
                .iter()
                .map(|(id, p)| AuthTemplate::discover(id, p).ready())
                .collect()
        })
        .unwrap_or_default();
    Some(Fingerprint { bytes, auth })
}
