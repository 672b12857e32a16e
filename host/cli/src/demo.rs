//! `clawhost demo`: build the example plugins and run one whole turn offline.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clawhost_agent_core::{Approvals, RunContext};
use clawhost_config::Config;
use clawhost_runner::{AgentHost, BUILTIN_RUNTIME};

use crate::transcript::{render_refusal, render_status};

/// The user message of the demo turn.
pub const DEMO_MESSAGE: &str =
    "Please count the words in this draft, then check my notes: the release ships on Friday after review.";

/// The user message of the languages demo turn.
pub const LANGUAGES_MESSAGE: &str = "Count these words, then shout a little.";

/// The user message of the coding demo turn.
pub const CODING_MESSAGE: &str = "The tests of my calculator fail. Find out why and fix it.";

/// The project the coding demo's agent works on: (path, content).
pub const CODING_PROJECT: [(&str, &str); 2] = [
    ("calc.py", "def add(a, b):\n    return a - b\n"),
    (
        "test_calc.py",
        "import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    ),
];

/// Which demo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Demo {
    /// Rust plugins: a tool, a policy hook that blocks, rewrites and asks
    /// approval, and result redaction (`host/cli/demo/clawhost.json`).
    Rust,
    /// Python and JavaScript plugins beside a Rust one
    /// (`host/cli/demo/languages.json`).
    Languages,
    /// The built-in tools on a small Python project: find, read, run the
    /// tests, edit, run them again; a hook blocks a destructive command
    /// (`host/cli/demo/coding.json`).
    Coding,
}

/// The demo's files, built into the binary so that an installed `clawhost`
/// runs the demo anywhere: (path under the demo dir, content).
const DEMO_FILES: [(&str, &str); 7] = [
    ("clawhost.json", include_str!("../demo/clawhost.json")),
    ("languages.json", include_str!("../demo/languages.json")),
    (
        "languages-script.json",
        include_str!("../demo/languages-script.json"),
    ),
    ("coding.json", include_str!("../demo/coding.json")),
    (
        "coding-script.json",
        include_str!("../demo/coding-script.json"),
    ),
    ("notes/todo.md", include_str!("../demo/notes/todo.md")),
    ("notes/secrets.md", include_str!("../demo/notes/secrets.md")),
];

/// A demo's configuration, loading plugins from `plugins_dir`, and the
/// directory its files (scripts, notes) were written to, removed on drop.
pub fn config_of(demo: Demo, plugins_dir: &Path) -> anyhow::Result<(Config, tempfile::TempDir)> {
    let files = tempfile::Builder::new()
        .prefix("clawhost-demo-")
        .tempdir()
        .context("creating the demo's directory")?;
    for (path, content) in DEMO_FILES {
        let path = files.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).context("writing the demo's files")?;
        }
        std::fs::write(&path, content).context("writing the demo's files")?;
    }
    let file = match demo {
        Demo::Rust => "clawhost.json",
        Demo::Languages => "languages.json",
        Demo::Coding => "coding.json",
    };
    let mut config = Config::load(&files.path().join(file))?;
    config.plugins.paths = vec![plugins_dir.to_path_buf()];
    Ok((config, files))
}

/// Write the coding demo's project into a new directory (removed when the
/// returned handle drops) and make it the workspace of `config`'s agents.
pub fn coding_workspace(config: &mut Config) -> anyhow::Result<tempfile::TempDir> {
    let workspace = tempfile::Builder::new()
        .prefix("clawhost-coding-demo-")
        .tempdir()
        .context("creating the coding demo's workspace")?;
    for (path, content) in CODING_PROJECT {
        std::fs::write(workspace.path().join(path), content)
            .context("writing the coding demo's project")?;
    }
    config.agents.defaults.workspace = Some(workspace.path().to_path_buf());
    Ok(workspace)
}

/// The demo configuration (`host/cli/demo/clawhost.json`), loading plugins
/// from `plugins_dir`, and the directory of its files.
pub fn demo_config(plugins_dir: &Path) -> anyhow::Result<(Config, tempfile::TempDir)> {
    config_of(Demo::Rust, plugins_dir)
}

/// Run the demo, printing the transcript to stdout.
pub async fn run(plugins_dir: Option<PathBuf>, demo: Demo) -> anyhow::Result<()> {
    let plugins_dir = match plugins_dir {
        Some(dir) => dir,
        None => {
            esay!("building the example plugins from source (plugins/build.sh)…");
            crate::build::build_plugins(None).context("building the example plugins")?
        }
    };
    // Relative to where the command runs, not to the demo config's directory.
    let plugins_dir = std::path::absolute(&plugins_dir)
        .with_context(|| format!("resolving {}", plugins_dir.display()))?;
    let (mut config, _files) = config_of(demo, &plugins_dir)?;
    let _workspace = match demo {
        Demo::Coding => Some(coding_workspace(&mut config)?),
        _ => None,
    };
    // The demo's session is stored, then removed with this directory.
    let sessions = tempfile::Builder::new()
        .prefix("clawhost-demo-sessions-")
        .tempdir()
        .context("creating the demo's session directory")?;
    config.sessions.dir = Some(sessions.path().to_path_buf());
    let (host, reports) = AgentHost::start(config, None).await?;
    let runner = host.runner();
    say!(
        "clawhost demo · runtime {BUILTIN_RUNTIME} · model scripted/demo · plugins from {}",
        plugins_dir.display()
    );
    for status in runner.plugins().statuses() {
        say!("{}", render_status(&status));
    }
    for line in reports.iter().filter_map(render_refusal) {
        say!("{line}");
    }
    say!();
    let mut ctx = RunContext::new("main", "scripted/demo");
    ctx.events = crate::live::LivePrinter::sink(crate::live::Format::Text(Default::default()));
    // policy-guard asks before `read_note`; the demo's operator answers.
    ctx.approvals = Approvals(Arc::new(crate::approve::ScriptedOperator));
    // The path `run` takes: a one-turn session, every hook.
    let message = match demo {
        Demo::Rust => DEMO_MESSAGE,
        Demo::Languages => LANGUAGES_MESSAGE,
        Demo::Coding => CODING_MESSAGE,
    };
    let outcome = crate::run::one_turn(&host, &ctx, message).await?;
    say!();
    say!(
        "turn finished: {} model calls · {} input / {} output tokens (estimated by the scripted provider)",
        outcome.iterations, outcome.usage.input_tokens, outcome.usage.output_tokens
    );
    Ok(())
}
