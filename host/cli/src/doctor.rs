//! `clawhost doctor` (and `clawhost plugins doctor`): the config, each
//! agent's model and its provider's credential, and everything plugins
//! depend on, the SDKs and guest toolchains, checked in one pass, each
//! finding marked `✓` (fine), `!` (works, but look) or `✗` (broken: the
//! command exits 1), with what to do; `--json` gives one `{level, code,
//! message, fix}` object per finding.

use std::path::Path;
use std::process::Command;

use clawhost_config::Config;
use clawhost_plugin_runtime::{CacheOutcome, ComponentCache, PluginPackage};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// Fine (`✓`).
    Ok,
    /// Works, but look (`!`).
    Warning,
    /// Broken: the command exits 1 (`✗`).
    Error,
}

/// Findings: printed as they come, or gathered for one JSON document of
/// `{level, code, message, fix}` objects.
#[derive(Default)]
struct Report {
    broken: usize,
    looks: usize,
    /// `Some` with `--json`.
    gathered: Option<Vec<serde_json::Value>>,
}

impl Report {
    /// A finding without a fix.
    fn say(&mut self, level: Level, code: &str, message: impl std::fmt::Display) {
        self.finding(level, code, message, None::<String>);
    }

    /// A finding; `code` is stable (`area.what`), `fix` says what to do.
    fn finding(
        &mut self,
        level: Level,
        code: &str,
        message: impl std::fmt::Display,
        fix: Option<impl std::fmt::Display>,
    ) {
        let (sign, name) = match level {
            Level::Ok => ("✓", "ok"),
            Level::Warning => {
                self.looks += 1;
                ("!", "warning")
            }
            Level::Error => {
                self.broken += 1;
                ("✗", "error")
            }
        };
        let fix = fix.map(|f| f.to_string());
        match &mut self.gathered {
            Some(all) => all.push(serde_json::json!({
                "level": name, "code": code, "message": message.to_string(), "fix": fix
            })),
            None => {
                say!("{sign} {message}");
                if let Some(fix) = fix {
                    say!("    fix: {fix}");
                }
            }
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

/// Whether `program` runs with `args` (exits 0).
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The SDKs new plugins build against, and the guest toolchains a plugin
/// author needs (warnings only: running agents needs none of them).
fn authoring(report: &mut Report) {
    use crate::toolchain::{install_hint, rust_route, RustRoute, Tool};
    match crate::sdk::sdk_root() {
        Ok(dir) => report.say(
            Level::Ok,
            "sdk.ready",
            format!(
                "SDKs for plugin API {}: {}",
                clawhost_plugin_runtime::CURRENT_API,
                dir.display()
            ),
        ),
        Err(e) => report.finding(
            Level::Warning,
            "sdk.unavailable",
            format!("the SDKs this binary carries cannot be unpacked: {e:#}"),
            Some("set XDG_DATA_HOME to a writable directory"),
        ),
    }
    match rust_route() {
        Some(RustRoute::Rustup) => report.say(
            Level::Ok,
            "toolchain.rust",
            "Rust guests: the wasm32-wasip2 target is installed",
        ),
        Some(RustRoute::DebianBuildStd) => report.say(
            Level::Ok,
            "toolchain.rust",
            "Rust guests: Debian's rustc with its std sources and wasi-libc (-Zbuild-std)",
        ),
        None => report.finding(
            Level::Warning,
            "toolchain.rust",
            "Rust guests: no toolchain builds wasm32-wasip2",
            Some(install_hint(Tool::RustWasm)),
        ),
    }
    if runs("python3", &["-c", "import venv, ensurepip"]) {
        report.say(
            Level::Ok,
            "toolchain.python",
            "Python guests: python3 with venv (the first build installs componentize-py)",
        );
    } else {
        report.finding(
            Level::Warning,
            "toolchain.python",
            "Python guests: no python3 with its venv module",
            Some(install_hint(Tool::PythonVenv)),
        );
    }
    if runs("node", &["--version"]) && runs("npm", &["--version"]) {
        report.say(
            Level::Ok,
            "toolchain.js",
            "JavaScript guests: node and npm (the first build installs jco)",
        );
    } else {
        report.finding(
            Level::Warning,
            "toolchain.js",
            "JavaScript guests: node or npm is missing",
            Some(install_hint(Tool::Node)),
        );
    }
}

/// A directory holding conversations or keys: readable by others is a
/// warning (the host tightens session directories as it opens them).
fn private_dir(report: &mut Report, code: &str, what: &str, dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    match std::fs::metadata(dir) {
        Err(_) => report.say(
            Level::Ok,
            code,
            format!("{what} {} (made on first use)", dir.display()),
        ),
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => report.finding(
            Level::Warning,
            code,
            format!(
                "{what} {} is open to other users (mode {:o})",
                dir.display(),
                meta.permissions().mode() & 0o777
            ),
            Some(format!("chmod 700 {}", dir.display())),
        ),
        Ok(_) => report.say(
            Level::Ok,
            code,
            format!("{what} {} (private)", dir.display()),
        ),
    }
}

/// Each agent's model and whether its provider can be authenticated: a
/// missing key of the provider an agent uses is a problem.
fn models(report: &mut Report, config: &Config) {
    let runtimes = clawhost_llm::ModelRuntimes::new();
    let set = match runtimes.rebuild(config) {
        Ok(set) => set,
        Err(e) => return report.say(Level::Error, "models.invalid", format!("models: {e:#}")),
    };
    for (agent, generation) in &set.agents {
        let provider = generation.model.split('/').next().unwrap_or_default();
        let model = &generation.model;
        match generation.auth.iter().find(|a| a.provider == provider) {
            Some(auth) if !auth.ready() => report.finding(
                Level::Error,
                "model.no_key",
                format!("agent {agent}: model {model}; provider `{provider}`: {}", auth.describe()),
                Some(format!("set it, or `clawhost config set models.providers.{provider}.apiKey '${{VAR}}'`")),
            ),
            Some(auth) => report.say(
                Level::Ok,
                "model.ready",
                format!("agent {agent}: model {model}; provider `{provider}`: {}", auth.describe()),
            ),
            None => report.say(Level::Ok, "model.ready", format!("agent {agent}: model {model}")),
        }
    }
}

/// Whether `program` (as a granted process resolves it) is an executable
/// file: a path, or a bare name found on `PATH`.
fn executable(program: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let runs = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.components().count() > 1 {
        return runs(program);
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| runs(&dir.join(program))))
}

/// The processes operators granted harness plugins: each command must be
/// there to start (a missing one fails every turn on that runtime).
fn processes(report: &mut Report, config: &Config) {
    for (id, entry) in &config.plugins.entries {
        for (name, process) in &entry.grants.processes {
            if executable(&process.program(&config.base_dir)) {
                report.say(
                    Level::Ok,
                    "process.ready",
                    format!("plugin {id}: process `{name}` runs `{}`", process.command),
                );
            } else {
                report.finding(
                    Level::Error,
                    "process.missing",
                    format!(
                        "plugin {id}: process `{name}`: `{}` is not an executable file here",
                        process.command
                    ),
                    Some(format!(
                        "install it, or set plugins.entries.{id}.grants.processes.{name}.command to its path"
                    )),
                );
            }
        }
    }
}

/// Run the doctor on the config at `path` (`json`: one JSON document of
/// findings instead of lines).
/// Each MCP server: started and listing its tools, or why not.
fn mcp_servers(report: &mut Report, servers: &[clawhost_mcp_client::ServerReport]) {
    use clawhost_mcp_client::ServerState;
    for s in servers {
        let name = &s.server;
        match &s.state {
            ServerState::Ready => report.say(
                Level::Ok,
                "mcp.ready",
                format!(
                    "MCP server {name} ({}, MCP {}): {} tool(s)",
                    s.transport,
                    s.protocol,
                    s.tools.len()
                ),
            ),
            ServerState::Disabled => say!("· MCP server {name}: disabled"),
            ServerState::Failed(why) => report.finding(
                Level::Error,
                "mcp.failed",
                why,
                Some(format!(
                    "check mcp.servers.{name}; `clawhost mcp list` shows it again"
                )),
            ),
        }
        for (tool, why) in &s.withheld {
            report.say(
                Level::Warning,
                "mcp.tool_withheld",
                format!("MCP server {name}: tool `{tool}` is not offered: {why}"),
            );
        }
    }
}

pub async fn run(path: &Path, json: bool) -> anyhow::Result<()> {
    let mut report = Report {
        gathered: json.then(Vec::new),
        ..Report::default()
    };
    let config = match Config::load(path) {
        Ok(config) => {
            report.say(
                Level::Ok,
                "config.valid",
                format!("config {} is valid", path.display()),
            );
            config
        }
        Err(e) => {
            report.say(Level::Error, "config.invalid", e);
            report.finish()?;
            anyhow::bail!("the config does not load; nothing else was checked");
        }
    };
    models(&mut report, &config);
    processes(&mut report, &config);
    for p in config
        .plugins
        .paths
        .iter()
        .chain(&config.plugins.load.paths)
    {
        let dir = config.resolve(p);
        match clawhost_plugin_runtime::discover(&dir) {
            Ok(found) => report.say(
                Level::Ok,
                "plugins.path",
                format!("plugin path {}: {} package(s)", dir.display(), found.len()),
            ),
            Err(e) => report.say(
                Level::Error,
                "plugins.path",
                format!("plugin path {}: {e}", dir.display()),
            ),
        }
    }
    let cache_dir = config
        .plugins
        .cache_dir
        .as_ref()
        .map(|d| config.resolve(d))
        .or_else(ComponentCache::default_dir);
    match &cache_dir {
        None => report.finding(
            Level::Warning,
            "cache.none",
            "no component cache (no plugins.cacheDir and no HOME): every start compiles",
            Some("set plugins.cacheDir"),
        ),
        Some(dir) => {
            let bytes = ComponentCache::artifact_bytes(dir);
            report.say(
                Level::Ok,
                "cache.ready",
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
            report.say(Level::Error, "plugins.engine", format!("{e:#}"));
            report.finish()?;
            anyhow::bail!("the plugin engine does not start");
        }
    };
    mcp_servers(&mut report, runner.mcp_servers());
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
            Err(e) => report.say(
                Level::Error,
                "plugin.refused",
                format!("{id} ({}): {e}", r.dir.display()),
            ),
            Ok(()) => {}
        }
    }
    for plugin in host.plugins() {
        let status = plugin.status();
        let id = &status.id;
        // A warm start defers each component to its first call: load it.
        match plugin.load_component().await {
            Ok(outcome) => report.say(
                Level::Ok,
                "plugin.loads",
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
            Err(e) => report.say(Level::Error, "plugin.load_failed", format!("{id}: {e}")),
        }
        if config
            .plugins
            .entries
            .get(id.as_str())
            .is_none_or(|e| e.sha256.is_none())
        {
            report.finding(
                Level::Warning,
                "plugin.unpinned",
                format!(
                    "{id} is not pinned: any component at {} loads as `{id}`",
                    status.dir.display()
                ),
                Some(format!(
                    "`clawhost plugins install` pins, or set plugins.entries.{id}.sha256 = {}",
                    status.sha256
                )),
            );
        }
        for unasked in &status.grants.unasked {
            report.say(Level::Warning, "plugin.grant_unasked", unasked.clone());
        }
        for (hook, needs) in &status.withheld {
            report.say(
                Level::Warning,
                "plugin.hook_withheld",
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
                    report.finding(
                        Level::Warning,
                        "plugin.fs_not_granted",
                        format!("{id} asks for {} and has no grant for it", dir.guest_path),
                        Some(format!("`clawhost plugins install DIR --fs {}=HOST_DIR`, or plugins.entries.{id}.grants.fs", dir.guest_path)),
                    );
                }
            }
            for name in &requested.env {
                if !status.grants.env.iter().any(|(k, _)| k == name) {
                    report.finding(
                        Level::Warning,
                        "plugin.env_not_granted",
                        format!("{id} asks to read ${name} and may not"),
                        Some(format!("`clawhost plugins install DIR --env {name}`, or plugins.entries.{id}.grants.env")),
                    );
                }
            }
        }
    }
    for mistake in crate::plugin_report::mistakes(&config, host, &reports, runner.withheld()) {
        report.say(Level::Error, "plugins.config", mistake);
    }
    if let Some(url) = &config.sessions.store {
        // The shared store: reachable, login accepted, schema not newer
        // (read, never migrated here).
        match clawhost_sessions_postgres::probe(url).await {
            Ok(version) => report.say(
                Level::Ok,
                "sessions.store",
                format!(
                    "sessions.store answers; clawhost schema version {version} (this build's: {})",
                    clawhost_sessions_postgres::SCHEMA_VERSION
                ),
            ),
            Err(e) => report.finding(
                Level::Error,
                "sessions.store",
                e.to_string(),
                Some("check sessions.store's URL and password, and that the database is up"),
            ),
        }
    } else {
        private_dir(
            &mut report,
            "sessions.dir",
            "sessions",
            &config.sessions_dir(),
        );
    }
    authoring(&mut report);
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
