//! The real programs the tests drive (agent runtimes, the MCP Inspector), from npm at pinned versions:
//! each package is installed once into `target/test-npm/<package>` and found
//! there, so `cargo test --workspace` needs no npm step of its own.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The Codex CLI, whose `codex app-server` the `codex` runtime drives.
pub const CODEX: &str = "@openai/codex@0.171.0";

/// Zed's ACP agent for Codex, which the `acp` runtime drives.
pub const CODEX_ACP: &str = "@zed-industries/codex-acp@0.16.0";

/// The ACP agent for Claude Code (its SDK carries the `claude` binary),
/// which the `acp` runtime drives.
pub const CLAUDE_ACP: &str = "@agentclientprotocol/claude-agent-acp@0.101.0";

/// Gemini CLI (`gemini --acp`), an ACP agent that reads and writes files
/// through the client's `fs/*` methods.
pub const GEMINI: &str = "@google/gemini-cli@0.61.0";

/// The MCP Inspector, whose CLI drives `clawhost mcp serve` as a user would.
pub const MCP_INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The executable `bin` of npm `package` (`name@version`), installed on first use.
pub fn bin(package: &str, bin: &str) -> PathBuf {
    // One install at a time in this test binary.
    static INSTALLING: OnceLock<Mutex<()>> = OnceLock::new();
    let _one = INSTALLING
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = clawhost::build::repo_root()
        .join("target")
        .join("test-npm")
        .join(package.replace(['@', '/'], "_"));
    let path = dir.join("node_modules").join(".bin").join(bin);
    let stamp = dir.join("installed");
    if !stamp.exists() || !path.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&dir)
            .arg(package)
            .output()
            .expect("npm runs (the tests drive the real agent runtimes from npm)");
        assert!(
            out.status.success(),
            "installing {package} into {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&stamp, package).unwrap();
    }
    path
}
