//! What the plugin commands (`plugins`, `plugins doctor`, `plugins install`)
//! report alike: a plugin's status as JSON, and the operator's choices and
//! mistakes read from the config beside the load reports.

use clawhost_config::Config;
use clawhost_plugin_runtime::{LoadReport, PluginHost, PluginStatus};
use serde_json::{json, Value};

/// Whether the operator's own lists leave `id` out (a refusal by choice).
pub fn left_out(config: &Config, id: &str) -> bool {
    let p = &config.plugins;
    p.allow.as_ref().is_some_and(|a| !a.iter().any(|x| x == id))
        || p.deny.iter().any(|x| x == id)
        || p.entries.get(id).is_some_and(|e| !e.enabled)
}

/// Operator mistakes that would otherwise pass silently.
pub fn mistakes(
    config: &Config,
    host: &PluginHost,
    reports: &[LoadReport],
    withheld: &[clawhost_runner::WithheldTool],
) -> Vec<String> {
    let mut found: Vec<String> = withheld
        .iter()
        .map(|w| {
            format!(
                "plugin `{}`: its tool `{}` is not offered: {}",
                w.plugin, w.tool, w.reason
            )
        })
        .collect();
    let seen: Vec<&str> = reports.iter().filter_map(|r| r.id.as_deref()).collect();
    for id in config.plugins.allow.iter().flatten() {
        if !seen.contains(&id.as_str()) {
            found.push(format!(
                "plugins.allow lists `{id}`, but no package (plugins.paths, resource extensions) has this id"
            ));
        }
    }
    for id in config.plugins.entries.keys() {
        if !seen.contains(&id.as_str()) {
            found.push(format!(
                "plugins.entries.{id} configures a plugin no package (plugins.paths, resource extensions) provides"
            ));
        }
    }
    let mut tools: Vec<String> = clawhost_runner::host_tools(config, &Default::default())
        .iter()
        .map(|t| t.spec().name.clone())
        .collect();
    for plugin in host.plugins() {
        tools.extend(plugin.status().tools);
    }
    for entry in &config.tools.deny {
        let names_something = entry.starts_with("plugin:")
            || clawhost_tools::group(entry).is_some()
            || tools.iter().any(|t| t.eq_ignore_ascii_case(entry));
        if !names_something {
            found.push(format!("tools.deny lists `{entry}`, which names no tool"));
        }
    }
    found
}

/// A plugin's status as the `--json` outputs show it.
pub fn status_json(s: &PluginStatus) -> Value {
    json!({
        "id": s.id,
        "version": s.version,
        "api": s.api.to_string(),
        "dir": s.dir,
        "sha256": s.sha256,
        "state": s.state,
        "tools": s.tools,
        "hooks": s.hooks.iter().map(|(h, p)| json!({"hook": h, "priority": p})).collect::<Vec<_>>(),
        "withheld": s.withheld.iter().map(|(h, n)| json!({"hook": h, "needs": n})).collect::<Vec<_>>(),
        "harnesses": s.harnesses,
        "grants": {
            "filesystem": s.grants.dirs.iter().map(|d| json!({
                "guestPath": d.guest_path, "hostPath": d.host_path, "access": format!("{:?}", d.access).to_lowercase()
            })).collect::<Vec<_>>(),
            "env": s.grants.env.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            // What each granted process runs (its environment's names only).
            "processes": s.grants.processes.iter().map(|(name, p)| (name.clone(), json!({
                "command": p.command, "args": p.args, "cwd": p.cwd,
                "env": p.env.keys().collect::<Vec<_>>(),
            }))).collect::<serde_json::Map<_, _>>(),
        },
        "warnings": s.grants.unasked,
        "stats": s.stats,
        "fromCache": s.from_cache,
        "declaration": s.declaration.as_str(),
    })
}

/// `plugins list --gateway URL`: a running gateway's plugins, their state
/// and call counters (`GET /v1/plugins`).
pub async fn from_gateway(url: &str, json: bool) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut request =
        reqwest::Client::new().get(format!("{}/v1/plugins", url.trim_end_matches('/')));
    if let Ok(token) = std::env::var("CLAWHOST_GATEWAY_TOKEN") {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .with_context(|| format!("asking the gateway at {url}"))?;
    let status = response.status();
    let doc: Value = response
        .json()
        .await
        .with_context(|| format!("reading the gateway's answer ({status})"))?;
    if !status.is_success() {
        anyhow::bail!("the gateway answered {status}: {}", doc["error"]["message"]);
    }
    if json {
        crate::say!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    for p in doc["data"].as_array().into_iter().flatten() {
        let s = &p["stats"];
        let f = &s["failures"];
        let state = match p["state"]["quarantined"]["reason"].as_str() {
            Some(reason) => format!("QUARANTINED ({reason})"),
            None => "active".into(),
        };
        crate::say!(
            "  {} {} · {state} · {} calls ({} served, {} cancelled; failed: {} timeout, {} memory, {} trap) · {} refused · {} quarantines · {:.3} s in calls · memory high-water {} KiB",
            p["id"].as_str().unwrap_or("?"),
            p["version"].as_str().unwrap_or(""),
            s["calls"],
            s["served"],
            s["cancelled"],
            f["timeout"],
            f["memory"],
            f["trap"],
            s["refused"],
            s["quarantines"],
            s["latencySeconds"].as_f64().unwrap_or_default(),
            s["memoryHighWaterBytes"].as_u64().unwrap_or_default() >> 10,
        );
    }
    Ok(())
}
