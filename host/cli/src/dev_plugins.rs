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
use clawhost_plugin_runtime::{LoadReport, PluginPackage};
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

/// Load the packages in `dirs` (built) into `config`: searched before any
/// other path, allowed, enabled, and pinned to their components as they
/// are now, so a package installed under the same id gives way (see
/// [`render_report`]).
pub fn apply(dirs: &[PathBuf], config: &mut Config) -> anyhow::Result<()> {
    for (i, dir) in dirs.iter().enumerate() {
        let package = PluginPackage::read(dir)?;
        let id = package.manifest.id.clone();
        let component = package.component_path();
        let bytes = std::fs::read(&component)
            .with_context(|| format!("reading {}", component.display()))?;
        let plugins = &mut config.plugins;
        plugins.paths.insert(i, dir.clone());
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

/// A load report as `run` and `chat` print it: a package that gives way to
/// a `--plugin` copy of the same id is said to, not shown as refused.
pub fn render_report(report: &LoadReport, dirs: &[PathBuf]) -> Option<String> {
    let id = report.result.as_ref().err()?.plugin_id()?;
    let dev = dirs.iter().find(|dir| {
        PluginPackage::read(dir).is_ok_and(|p| p.manifest.id == id) && !same_dir(dir, &report.dir)
    });
    match dev {
        Some(dev) => Some(format!(
            "  · {id} at {} gives way to the --plugin copy at {}",
            report.dir.display(),
            dev.display()
        )),
        None => render_refusal(report),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
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
                    for line in report
                        .plugins
                        .iter()
                        .filter_map(|r| render_report(r, &dirs))
                    {
                        esay!("{line}");
                    }
                }
                Err(e) => esay!("reload failed, the previous build keeps serving: {e:#}"),
            }
        }
    })
}
