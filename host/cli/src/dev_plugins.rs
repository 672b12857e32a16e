//! `--plugin <dir>` on `run` and `chat`: a plugin package under development,
//! built before the agent starts and loaded beside the configured plugins,
//! pinned to the component just built. In `chat` its sources are watched:
//! an edit rebuilds the package and reloads the host; a failed build is
//! reported and the previous build keeps serving.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::Context;
use clawhost_config::Config;
use clawhost_plugin_runtime::PluginPackage;
use clawhost_runner::{AgentHost, ConfigOverlay};

use crate::transcript::render_refusal;

/// Build every package in `dirs`; returns them as absolute paths.
pub fn build_all(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    dirs.iter()
        .map(|dir| {
            crate::plugin_build::build(dir, false)
                .with_context(|| format!("building --plugin {}", dir.display()))
        })
        .collect()
}

/// Load the packages in `dirs` (built) into `config`: searched after
/// `plugins.paths`, allowed, enabled, and pinned to their components as
/// they are now, so a package installed under the same id gives way.
pub fn apply(dirs: &[PathBuf], config: &mut Config) -> anyhow::Result<()> {
    for dir in dirs {
        let package = PluginPackage::read(dir)?;
        let id = package.manifest.id.clone();
        let component = package.component_path();
        let bytes = std::fs::read(&component)
            .with_context(|| format!("reading {}", component.display()))?;
        let plugins = &mut config.plugins;
        plugins.load.paths.push(dir.clone());
        if let Some(allow) = &mut plugins.allow {
            if !allow.contains(&id) {
                allow.push(id.clone());
            }
        }
        plugins.deny.retain(|d| d != &id);
        let entry = plugins.entries.entry(id).or_default();
        entry.enabled = true;
        entry.sha256 = Some(clawhost_plugin_runtime::sha256_hex(&bytes));
    }
    Ok(())
}

/// [`apply`] as the host's reload overlay.
pub fn overlay(dirs: Vec<PathBuf>) -> ConfigOverlay {
    Arc::new(move |config: &mut Config| apply(&dirs, config))
}

/// The package's sources as (path, modified, size), sorted.
fn fingerprint(dir: &Path, out: &mut Vec<(PathBuf, SystemTime, u64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if crate::build_stamp::is_output(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            fingerprint(&entry.path(), out);
        } else {
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.push((entry.path(), modified, meta.len()));
        }
    }
    out.sort();
}

/// What the sources of some packages were at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources(Vec<(PathBuf, SystemTime, u64)>);

/// The sources of `dirs` now; take it before building, so that an edit made
/// while the build runs is seen by [`watch`].
pub fn sources(dirs: &[PathBuf]) -> Sources {
    let mut out = Vec::new();
    for dir in dirs {
        fingerprint(
            &std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            &mut out,
        );
    }
    Sources(out)
}

/// Rebuild and reload when a source of `dirs` differs from `last` (checked
/// every second).
pub fn watch(
    host: Arc<AgentHost>,
    dirs: Vec<PathBuf>,
    mut last: Sources,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let now = sources(&dirs);
            if now == last {
                continue;
            }
            last = now;
            let build = {
                let dirs = dirs.clone();
                tokio::task::spawn_blocking(move || build_all(&dirs)).await
            };
            match build {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    esay!("plugin rebuild failed, the previous build keeps serving: {e:#}");
                    continue;
                }
                Err(e) => {
                    esay!("plugin rebuild failed: {e}");
                    continue;
                }
            }
            match host.reload().await {
                Ok(report) => {
                    esay!(
                        "plugins rebuilt and reloaded: generation {}",
                        report.generation
                    );
                    for line in report.plugins.iter().filter_map(render_refusal) {
                        esay!("{line}");
                    }
                }
                Err(e) => esay!("reload failed, the previous build keeps serving: {e:#}"),
            }
        }
    })
}
