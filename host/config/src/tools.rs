//! The `tools` section: which tools the agent may call at all.

use serde::Deserialize;

/// Tool policy: `deny` wins; when `allow` is set only listed tools may run.
/// Entries are tool names (matched without regard to ASCII case),
/// `plugin:<id>` for every tool of a plugin, or a group of built-in tools
/// (`group:fs`, `group:runtime`, `group:web`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// When set, only these tools may run.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// These tools never run.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Longest tool description accepted, in characters (descriptions are
    /// sent with every model request); a longer one refuses its plugin.
    #[serde(default = "default_max_description")]
    pub max_description_chars: usize,
    /// Largest parameter schema accepted, in KiB of JSON.
    #[serde(default = "default_max_schema_kb")]
    pub max_schema_kb: usize,
    /// Which built-in host tools are offered at all (before `allow`/`deny`);
    /// unset: every one (`full`).
    #[serde(default)]
    pub profile: Option<ToolProfile>,
    /// The `exec` and `process` tools.
    #[serde(default)]
    pub exec: ExecConfig,
    /// The `web_fetch` tool.
    #[serde(default)]
    pub web: WebConfig,
    /// Offer the host's test fixture tool `echo` (returns its `text`), for
    /// checking policy and hooks without a plugin; off by default, so models
    /// are never offered it in real use.
    #[serde(default)]
    pub test_fixtures: bool,
}

/// A base set of built-in host tools (OpenClaw's `tools.profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolProfile {
    /// No built-in tool.
    Minimal,
    /// `group:fs` and `group:runtime`.
    Coding,
    /// `group:web`.
    Messaging,
    /// Every built-in tool.
    Full,
}

/// Settings of `exec` (commands run in the workspace).
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecConfig {
    /// Commands that run without asking the operator: an entry's words must
    /// begin the command's (`"cargo test"` allows `cargo test -p x`), and a
    /// command with shell syntax (`;`, `|`, `$`, quotes, redirections…) is
    /// always asked about; `"*"` allows every command.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Default and largest run time of a command, in ms.
    #[serde(default = "default_exec_timeout")]
    pub timeout_ms: u64,
    /// Output kept of each of stdout and stderr, in KiB.
    #[serde(default = "default_exec_output_kb")]
    pub max_output_kb: u64,
}

fn default_exec_timeout() -> u64 {
    120_000
}
fn default_exec_output_kb() -> u64 {
    64
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            timeout_ms: default_exec_timeout(),
            max_output_kb: default_exec_output_kb(),
        }
    }
}

/// Settings of `web_fetch`.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebConfig {
    /// Allow fetching private, loopback and link-local addresses (refused by
    /// default: a model could otherwise reach the operator's LAN or a cloud
    /// metadata endpoint).
    #[serde(default)]
    pub allow_private: bool,
    /// Largest body read, in KiB.
    #[serde(default = "default_web_max_kb")]
    pub max_kb: u64,
    /// Whole-fetch time limit, in ms.
    #[serde(default = "default_web_timeout")]
    pub timeout_ms: u64,
}

fn default_web_max_kb() -> u64 {
    512
}
fn default_web_timeout() -> u64 {
    20_000
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            allow_private: false,
            max_kb: default_web_max_kb(),
            timeout_ms: default_web_timeout(),
        }
    }
}

fn default_max_description() -> usize {
    4096
}
fn default_max_schema_kb() -> usize {
    32
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            allow: None,
            deny: Vec::new(),
            max_description_chars: default_max_description(),
            max_schema_kb: default_max_schema_kb(),
            profile: None,
            exec: ExecConfig::default(),
            web: WebConfig::default(),
            test_fixtures: false,
        }
    }
}
