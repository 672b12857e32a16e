//! `clawhost plugins`: what loaded, what was refused and why, one plugin in
//! detail, and precompiling into the cache. A plugin the operator wanted
//! (not left out by `plugins.allow`/`deny`/`enabled`) that was refused makes
//! the command fail; so do operator mistakes that would pass silently.

use std::path::Path;

use clawhost_config::Config;
use clawhost_plugin_runtime::{CacheOutcome, LoadError, LoadReport, LoadedPlugin};
use serde_json::{json, Value};

use crate::plugin_report::{left_out, mistakes, status_json};
use crate::transcript::{render_refusal, render_status};

/// What to do.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Action {
    /// Every configured plugin: loaded (tools, hooks, grants) or refused and why.
    List {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
        /// The plugins of a running gateway (its URL, e.g.
        /// http://127.0.0.1:18789), with their call counters; its token,
        /// if it has one, from $CLAWHOST_GATEWAY_TOKEN.
        #[arg(long)]
        gateway: Option<String>,
    },
    /// One loaded plugin: manifest, API version, requested and granted
    /// capabilities, hooks with priorities, tools with schemas, digest, cache.
    Inspect {
        /// Plugin id.
        id: String,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compile every configured plugin into the component cache (so the
    /// next start only loads), showing each compile.
    Precompile,
    /// Verify a package (a directory, a `.tar`/`.tar.gz` archive, or
    /// `oci://REGISTRY/REPOSITORY:TAG` / `@sha256:…` in a registry) loads,
    /// copy it into `plugins/<id>` beside the config, and record its sha256
    /// pin (and, from a registry, the manifest digest) and the grants given
    /// here.
    Install {
        /// The package directory or archive, or `oci://…`.
        source: std::path::PathBuf,
        /// How long a registry may stay silent, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 60)]
        registry_timeout: u64,
        #[command(flatten)]
        grants: crate::plugin_admin::InstallGrants,
        /// Print the installed plugin as JSON (as `list --json` shows one).
        #[arg(long)]
        json: bool,
    },
    /// Move a plugin installed from a registry to what its tag points to
    /// now (verified and pinned as `install` does); nothing moves otherwise.
    Update {
        /// Plugin id.
        id: String,
        /// How long the registry may stay silent, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 60)]
        registry_timeout: u64,
        /// Print the installed plugin as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a package `install` put beside the config, and its config entry.
    Uninstall {
        /// Plugin id.
        id: String,
        /// Say what changed as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Load this plugin again (`plugins.entries.<id>.enabled`, allowlist, denylist).
    Enable {
        /// Plugin id.
        id: String,
        /// Say what changed as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop loading this plugin (`plugins.entries.<id>.enabled: false`).
    Disable {
        /// Plugin id.
        id: String,
        /// Say what changed as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check everything plugins depend on: the config, the cache and its key,
    /// each package (loads, pinned, grants asked for and given), the guest
    /// toolchains; exit 1 when something is wrong.
    Doctor {
        /// One JSON document of findings instead of lines.
        #[arg(long)]
        json: bool,
    },
}

fn refusal_json(r: &LoadReport) -> Option<Value> {
    let err = r.result.as_ref().err()?;
    Some(json!({"dir": r.dir, "id": r.id, "reason": err.to_string()}))
}

fn inspect_json(plugin: &std::sync::Arc<LoadedPlugin>) -> Value {
    let m = plugin.manifest();
    let mut out = status_json(&plugin.status());
    out["manifest"] = json!({
        "id": m.id,
        "name": m.name,
        "version": m.version,
        "description": m.description,
        "apiVersion": m.api_version,
        "component": m.component,
    });
    out["requested"] = json!({
        "filesystem": m.capabilities.filesystem.iter().map(|d| json!({
            "guestPath": d.guest_path, "access": format!("{:?}", d.access).to_lowercase()
        })).collect::<Vec<_>>(),
        "env": m.capabilities.env,
        "harness": m.capabilities.harness,
        "processes": m.capabilities.processes,
    });
    out["imports"] = json!(plugin.interfaces().imports);
    out["exports"] = json!(plugin.interfaces().exports);
    out["toolSchemas"] = plugin
        .tools()
        .iter()
        .map(|t| {
            let spec = t.spec();
            json!({"name": spec.name, "description": spec.description, "parameters": spec.parameters})
        })
        .collect();
    out
}

/// What `clawhost plugins` reports from the plugins a run would load.
enum Report {
    Text,
    Json,
    Precompile,
    /// A plugin id, and JSON or not.
    Inspect(String, bool),
}

/// Run `clawhost plugins` on the config at `path`.
pub async fn run(path: &Path, action: Option<Action>) -> anyhow::Result<()> {
    let action = action.unwrap_or(Action::List {
        json: false,
        gateway: None,
    });
    let report = match &action {
        Action::List {
            json,
            gateway: Some(url),
        } => return crate::plugin_report::from_gateway(url, *json).await,
        Action::Install {
            source,
            registry_timeout,
            grants,
            json,
        } => {
            let timeout = std::time::Duration::from_secs(*registry_timeout);
            return crate::plugin_admin::install(path, source, grants, timeout, *json).await;
        }
        Action::Update {
            id,
            registry_timeout,
            json,
        } => {
            let timeout = std::time::Duration::from_secs(*registry_timeout);
            let Some(next) = crate::plugin_oci::update_target(path, id, timeout).await? else {
                return Ok(());
            };
            let flags = crate::plugin_admin::InstallGrants {
                force: true,
                ..Default::default()
            };
            let next = std::path::PathBuf::from(next);
            return crate::plugin_admin::install(path, &next, &flags, timeout, *json).await;
        }
        Action::Uninstall { id, json } => return crate::plugin_admin::uninstall(path, id, *json),
        Action::Enable { id, json } => {
            return crate::plugin_admin::set_enabled(path, id, true, *json)
        }
        Action::Disable { id, json } => {
            return crate::plugin_admin::set_enabled(path, id, false, *json)
        }
        Action::Doctor { json } => return crate::doctor::run(path, *json).await,
        Action::List { json: true, .. } => Report::Json,
        Action::List { json: false, .. } => Report::Text,
        Action::Precompile => Report::Precompile,
        Action::Inspect { id, json } => Report::Inspect(id.clone(), *json),
    };
    let config = Config::load(path)?;
    if matches!(report, Report::Precompile)
        && config.plugins.cache_dir.is_none()
        && clawhost_plugin_runtime::ComponentCache::default_dir().is_none()
    {
        anyhow::bail!("precompile needs a cache: set plugins.cacheDir (or HOME)");
    }
    // What the agent would load: plugins.paths and resource extensions.
    // What a run wires: the same refusals and withheld tools.
    let (runner, reports) = clawhost_runner::EmbeddedRunner::wire(config.clone()).await?;
    let host = runner.plugins();
    let mistakes = mistakes(&config, host, &reports, runner.withheld());
    let wanted_but_refused: Vec<&LoadReport> = reports
        .iter()
        .filter(|r| r.result.is_err())
        .filter(|r| !r.id.as_deref().is_some_and(|id| left_out(&config, id)))
        .collect();
    match report {
        Report::Inspect(id, json) => {
            let Some(plugin) = host.plugin(&id) else {
                let why = reports
                    .iter()
                    .find(|r| r.id.as_deref() == Some(id.as_str()))
                    .and_then(|r| r.result.as_ref().err().map(LoadError::to_string))
                    .unwrap_or_else(|| "no configured package has this id".into());
                anyhow::bail!("plugin `{id}` is not loaded: {why}");
            };
            // A warm start defers the component to the first call: load it
            // (and say so) if it cannot be.
            plugin.load_component().await?;
            let mut detail = inspect_json(plugin);
            detail["provenance"] = crate::plugin_oci::provenance(&config, plugin);
            if json {
                say!("{}", serde_json::to_string_pretty(&detail)?);
            } else {
                say!("{}", render_status(&plugin.status()));
                say!("manifest: {}", detail["manifest"]);
                say!("requested: {}", detail["requested"]);
                say!("granted: {}", detail["grants"]);
                say!("exports: {}", detail["exports"]);
                say!("imports: {}", detail["imports"]);
                say!(
                    "sha256: {} ({})",
                    detail["sha256"].as_str().unwrap_or(""),
                    if plugin.status().from_cache {
                        "from the compiled cache"
                    } else {
                        "compiled now"
                    }
                );
                let provenance = &detail["provenance"];
                if let Some(source) = provenance["source"].as_str() {
                    say!("source: {source}");
                }
                let signature = &provenance["signature"];
                match (signature["signer"].as_str(), signature["error"].as_str()) {
                    (Some(signer), _) => say!(
                        "signature: signed by `{signer}`; signed capabilities: {}",
                        signature["capabilities"]
                    ),
                    (None, Some(error)) => say!("signature: {error}"),
                    (None, None) => say!("signature: none"),
                }
                say!(
                    "registration: {}",
                    match plugin.status().declaration {
                        clawhost_plugin_runtime::Declaration::Called => "called at load",
                        clawhost_plugin_runtime::Declaration::Remembered =>
                            "remembered from an earlier load (instantiated on first use)",
                        clawhost_plugin_runtime::Declaration::Outdated =>
                            "remembered, but register now answers differently (the next load uses the new answer)",
                    }
                );
                for tool in detail["toolSchemas"].as_array().into_iter().flatten() {
                    say!(
                        "tool {}: {}",
                        tool["name"].as_str().unwrap_or(""),
                        tool["parameters"]
                    );
                }
            }
            return Ok(());
        }
        Report::Json => {
            let doc = json!({
                "loaded": host.statuses().iter().map(status_json).collect::<Vec<_>>(),
                "refused": reports.iter().filter_map(refusal_json).collect::<Vec<_>>(),
                "warnings": mistakes,
            });
            say!("{}", serde_json::to_string_pretty(&doc)?);
        }
        Report::Text | Report::Precompile => {
            let precompile = matches!(report, Report::Precompile);
            for plugin in host.plugins() {
                let status = plugin.status();
                if precompile {
                    // A warm start defers each component to its first call.
                    let how = match plugin.load_component().await {
                        Ok(CacheOutcome::Compiled) => "compiled".to_string(),
                        Ok(_) => "already compiled".to_string(),
                        Err(e) => format!("not compiled: {e}"),
                    };
                    say!("{}: {how}", status.id);
                } else {
                    say!("{}", render_status(&status));
                }
            }
            for line in reports.iter().filter_map(render_refusal) {
                say!("{line}");
            }
            for warning in &mistakes {
                esay!("warning: {warning}");
            }
        }
    }
    if !wanted_but_refused.is_empty() || !mistakes.is_empty() {
        anyhow::bail!(
            "{} plugin(s) refused and {} configuration mistake(s); see above",
            wanted_but_refused.len(),
            mistakes.len()
        );
    }
    Ok(())
}
