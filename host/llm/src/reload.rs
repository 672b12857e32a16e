//! Config reload: an explicit `reload`, and a polling watcher that rebuilds
//! the model runtime generation when the config file or discovered auth change.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clawhost_config::Config;

use crate::auth::AuthTemplate;
use crate::generation::{GenerationError, GenerationSet, ModelRuntimes};

/// Load `path` and rebuild; a config that does not load is recorded as a
/// failed generation and the previous one keeps serving.
pub fn reload(
    runtimes: &ModelRuntimes,
    path: &Path,
) -> Result<Arc<GenerationSet>, GenerationError> {
    match Config::load(path) {
        Ok(config) => runtimes.rebuild(&config),
        Err(e) => {
            let error = GenerationError {
                number: runtimes.next_number(),
                reason: e.to_string(),
            };
            runtimes.record_failure(error.clone());
            Err(error)
        }
    }
}

fn fingerprint(path: &Path) -> Option<(Vec<u8>, Vec<bool>)> {
    let bytes = std::fs::read(path).ok()?;
    // Which credentials are present: discovery only, no registry or HTTP client.
    let auth = Config::load(path)
        .map(|c| {
            c.models
                .providers
                .iter()
                .map(|(id, p)| AuthTemplate::discover(id, p).ready())
                .collect()
        })
        .unwrap_or_default();
    Some((bytes, auth))
}

/// Watch `path` every `interval`; rebuild on a change of its content or of
/// which credentials are present. Stops when the returned handle is aborted.
pub fn watch(
    runtimes: Arc<ModelRuntimes>,
    path: PathBuf,
    interval: Duration,
) -> tokio::task::JoinHandle<()> {
    let mut last = fingerprint(&path);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            let now = fingerprint(&path);
            if now != last {
                last = now;
                let _ = reload(&runtimes, &path);
            }
        }
    })
}
