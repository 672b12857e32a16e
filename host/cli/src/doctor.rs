//! `clawhost doctor` (and `clawhost plugins doctor`): the config, each
//! agent's model and its provider's credential, and everything plugins
//! depend on, checked in one pass, each finding marked `✓` (fine), `!`
//! (works, but look) or `✗` (broken: the command exits 1).

use std::path::Path;
use std::process::Command;

use clawhost_config::Config;
use clawhost_plugin_runtime::{CacheOutcome, ComponentCache, PluginPackage};

/// How a finding reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Fine,
    Look,
    Broken,
}

/// Findings: printed as they come, or gathered for one JSON document.
#[derive(Default)]
struct Report {
    broken: usize,
    looks: usize,
    /// `Some` with `--json`.
    gathered: Option<Vec<serde_json::Value>>,
}

impl Report {
    fn say(&mut self, mark: Mark, text: impl std::fmt::Display) {
        let (sign, name) = match mark {
            Mark::Fine => ("✓", "ok"),
            Mark::Look => {
                self.looks += 1;
                ("!", "look")
            }
            Mark::Broken => {
                self.broken += 1;
                ("✗", "problem")
            }
        };
        match &mut self.gathered {
            Some(all) => all.push(serde_json::json!({"mark": name, "text": text.to_string()})),
            None => say!("{sign} {text}"),
        }
    }

    /// Print the gathered findings (with `--json`).
    fn finish(&self) -> anyhow::Result<()> {
        if let Some(all) = &self.gathered {
            let doc = serde_json::json!({
                "findings": all, "problems": self.broken, "looks": self.looks
            });
            say!("{}", serde_json::to_string_pretty(&doc)?);
        }
        Ok(())
    }
}

/// Whether `program` runs (`program --version` exits 0).
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The guest toolchains a plugin author needs, for information only.
fn toolchains(report: &mut Report) {
    use crate::toolchain::{rust_route, RustRoute};
    match rust_route() {
        Some(RustRoute::Rustup) => report.say(Mark::Fine, "Rust guests: the wasm32-wasip2 target is installed"),
        Some(RustRoute::DebianBuildStd) => report.say(
            Mark::Fine,
            "Rust guests: no rustup wasm32-wasip2 target; Debian's std sources and wasi-libc are here (plugins/build.sh's -Zbuild-std route)",
        ),
        None => report.say(
            Mark::Look,
            "Rust guests: no wasm32-wasip2 target (`rustup target add wasm32-wasip2`)",
        ),
    }
    for (program, guests, present, missing) in [
        (
            "componentize-py",
            "Python",
            "componentize-py is on PATH",
            "componentize-py is not on PATH (`pip install componentize-py`)",
        ),
        (
            "node",
            "JavaScript",
            "node is on PATH (the JS SDK brings jco)",
            "node is not on PATH",
        ),
    ] {
        match runs(program) {
            true => report.say(Mark::Fine, format!("{guests} guests: {present}")),
            false => report.say(Mark::Look, format!("{guests} guests: {missing}")),
        }
    }
}

/// Each agent's model and whether its provider can be authenticated: a
/// missing key of the provider an agent uses is a problem.
fn models(report: &mut Report, config: &Config) {
    let runtimes = clawhost_llm::ModelRuntimes::new();
    let set = match runtimes.rebuild(config) {
        Ok(set) => set,
        Err(e) => return report.say(Mark::Broken, format!("models: {e:#}")),
    };
    for (agent, generation) in &set.agents {
        let provider = generation.model.split('/').next().unwrap_or_default();
        let model = &generation.model;
        match generation.auth.iter().find(|a| a.provider == provider) {
            Some(auth) if !auth.ready() => report.say(
                Mark::Broken,
                format!("agent {agent}: model {model}; provider `{provider}`: {} (set it, or `clawhost config set models.providers.{provider}.apiKey ...`)", auth.describe()),
            ),
            Some(auth) => report.say(
                Mark::Fine,
                format!("agent {agent}: model {model}; provider `{provider}`: {}", auth.describe()),
            ),
            None => report.say(Mark::Fine, format!("agent {agent}: model {model}")),
        }
    }
}

/// Run the doctor on the config at `path` (`json`: one JSON document of
/// findings instead of lines).
pub async fn run(path: &Path, json: bool) -> anyhow::Result<()> {
    let mut report = Report {
        gathered: json.then(Vec::new),
        ..Report::default()
    };
    let config = match Config::load(path) {
        Ok(config) => {
            report.say(Mark::Fine, format!("config {} is valid", path.display()));
            config
        }
        Err(e) => {
            report.say(Mark::Broken, e);
            report.finish()?;
            anyhow::bail!("the config does not load; nothing else was checked");
        }
    };
    models(&mut report, &config);
    for p in config
        .plugins
        .paths
        .iter()
        .chain(&config.plugins.load.paths)
    {
        let dir = config.resolve(p);
        match clawhost_plugin_runtime::discover(&dir) {
            Ok(found) => report.say(
                Mark::Fine,
                format!("plugin path {}: {} package(s)", dir.display(), found.len()),
            ),
            Err(e) => report.say(Mark::Broken, format!("plugin path {}: {e}", dir.display())),
        }
    }
    let cache_dir = config
        .plugins
        .cache_dir
        .as_ref()
        .map(|d| config.resolve(d))
        .or_else(ComponentCache::default_dir);
    match &cache_dir {
        None => report.say(
            Mark::Look,
            "no component cache (no plugins.cacheDir and no HOME): every start compiles",
        ),
        Some(dir) => {
            let bytes = ComponentCache::artifact_bytes(dir);
            report.say(
                Mark::Fine,
                format!(
                    "component cache {}: {:.1} MiB of at most {} MiB",
                    dir.display(),
                    bytes as f64 / (1 << 20) as f64,
                    config.plugins.cache_max_mb
                ),
            );
        }
    }
    // Everything else (the cache's ownership and key, each package) is
    // checked by loading what the agent would load.
    let (runner, reports) = match clawhost_runner::EmbeddedRunner::wire(config.clone()).await {
        Ok(wired) => wired,
        Err(e) => {
            report.say(Mark::Broken, format!("{e:#}"));
            report.finish()?;
            anyhow::bail!("the plugin engine does not start");
        }
    };
    let host = runner.plugins();
    for r in &reports {
        let id = r.id.as_deref().unwrap_or("?");
        match &r.result {
            Err(e)
                if r.id
                    .as_deref()
                    .is_some_and(|id| crate::plugin_report::left_out(&config, id)) =>
            {
                say!("· {id}: left out by the config ({e})");
            }
            Err(e) => report.say(Mark::Broken, format!("{id} ({}): {e}", r.dir.display())),
            Ok(()) => {}
        }
    }
    for plugin in host.plugins() {
        let status = plugin.status();
        let id = &status.id;
        // A warm start defers each component to its first call: load it.
        match plugin.load_component().await {
            Ok(outcome) => report.say(
                Mark::Fine,
                format!(
                    "{id} {} loads (API {}, {})",
                    status.version,
                    status.api,
                    if outcome == CacheOutcome::Compiled {
                        "compiled now"
                    } else {
                        "from the cache"
                    }
                ),
            ),
            Err(e) => report.say(Mark::Broken, format!("{id}: {e}")),
        }
        if config
            .plugins
            .entries
            .get(id.as_str())
            .is_none_or(|e| e.sha256.is_none())
        {
            report.say(
                Mark::Look,
                format!("{id} is not pinned: any component at {} loads as `{id}` (`plugins install` pins, or set plugins.entries.{id}.sha256 = {})", status.dir.display(), status.sha256),
            );
        }
        for unasked in &status.grants.unasked {
            report.say(Mark::Look, unasked.clone());
        }
        for (hook, needs) in &status.withheld {
            report.say(
                Mark::Look,
                format!("{id}: hook {hook} is withheld: {needs}"),
            );
        }
        if let Ok(package) = PluginPackage::read(&status.dir) {
            let requested = &package.manifest.capabilities;
            for dir in &requested.filesystem {
                if !status
                    .grants
                    .dirs
                    .iter()
                    .any(|d| d.guest_path == dir.guest_path)
                {
                    report.say(
                        Mark::Look,
                        format!("{id} asks for {} and has no grant for it", dir.guest_path),
                    );
                }
            }
            for name in &requested.env {
                if !status.grants.env.iter().any(|(k, _)| k == name) {
                    report.say(Mark::Look, format!("{id} asks to read ${name} and may not"));
                }
            }
        }
    }
    for mistake in crate::plugin_report::mistakes(&config, host, &reports, runner.withheld()) {
        report.say(Mark::Broken, mistake);
    }
    toolchains(&mut report);
    report.finish()?;
    if report.broken > 0 {
        anyhow::bail!(
            "{} problem(s) and {} thing(s) to look at",
            report.broken,
            report.looks
        );
    }
    if !json {
        say!("no problems; {} thing(s) to look at", report.looks);
    }
    Ok(())
}
