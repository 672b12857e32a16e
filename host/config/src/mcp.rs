//! The `mcp` section: MCP servers whose tools the agent may call.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::check::CheckError;

/// MCP servers used as tool sources.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpConfig {
    /// Servers by name (`[a-zA-Z0-9-]`, 1–24 characters): their tools are
    /// offered as `mcp__<name>__<tool>`.
    #[serde(default)]
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// One MCP server: a program spoken to over its stdio (`command`), or a
/// Streamable HTTP endpoint (`url`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program (stdio): a path (relative to the config file's directory
    /// when it holds a `/`) or a name looked up on `PATH`. No shell runs it.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments, passed as they are.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its whole environment besides `PATH` (nothing else of the host's is
    /// passed; `${VAR}` takes a value from the host's).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory (relative to the config file's directory).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The Streamable HTTP endpoint (`http://` or `https://`).
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers sent with every request (`"Authorization": "Bearer
    /// ${TOKEN}"`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Off: the server is not started and its tools are not offered.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Ask the operator before each call of this server's tools.
    #[serde(default)]
    pub require_approval: bool,
    /// How long the server has to start and list its tools, in ms.
    #[serde(default = "default_start_timeout")]
    pub start_timeout_ms: u64,
    /// How long one tool call may take, in ms.
    #[serde(default = "default_call_timeout")]
    pub timeout_ms: u64,
    /// Largest message the server may send, in KiB (a tool result over it
    /// is refused).
    #[serde(default = "default_max_result_kb")]
    pub max_result_kb: u64,
}

fn yes() -> bool {
    true
}

fn default_start_timeout() -> u64 {
    30_000
}

fn default_call_timeout() -> u64 {
    120_000
}

fn default_max_result_kb() -> u64 {
    4096
}

impl McpServerConfig {
    /// The program to start (stdio servers): a relative path (one holding a
    /// `/`) resolves against `base_dir`; a bare name is left for `PATH`.
    pub fn program(&self, base_dir: &std::path::Path) -> Option<PathBuf> {
        Some(crate::plugins::program(self.command.as_deref()?, base_dir))
    }
}

/// Longest server name: `mcp__<name>__` leaves room for the tool's own.
pub const MAX_SERVER_NAME: usize = 24;

impl McpConfig {
    /// Values that parse but cannot be used.
    pub(crate) fn check(&self) -> Result<(), CheckError> {
        let fail = |key: String, reason: &str| {
            Err(CheckError {
                key,
                reason: reason.into(),
            })
        };
        for (name, server) in &self.servers {
            let key = format!("mcp.servers.{name}");
            let name_ok = !name.is_empty()
                && name.len() <= MAX_SERVER_NAME
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            if !name_ok {
                return fail(key, "a server name is 1–24 characters of [a-zA-Z0-9-]");
            }
            match (&server.command, &server.url) {
                (Some(_), Some(_)) => return fail(key, "set `command` or `url`, not both"),
                (None, None) => {
                    return fail(
                        key,
                        "set `command` (a program spoken to over stdio) or `url` (Streamable HTTP)",
                    )
                }
                (Some(c), None) if c.trim().is_empty() => {
                    return fail(format!("{key}.command"), "is empty")
                }
                (None, Some(url))
                    if !(url.starts_with("http://") || url.starts_with("https://")) =>
                {
                    return fail(format!("{key}.url"), "must start with http:// or https://")
                }
                (None, Some(_)) if !server.args.is_empty() || !server.env.is_empty() => {
                    return fail(key, "`args` and `env` are for `command` servers")
                }
                (Some(_), None) if !server.headers.is_empty() => {
                    return fail(format!("{key}.headers"), "are for `url` servers")
                }
                _ => {}
            }
            for (field, value) in [
                ("startTimeoutMs", server.start_timeout_ms),
                ("timeoutMs", server.timeout_ms),
                ("maxResultKb", server.max_result_kb),
            ] {
                if value == 0 {
                    return fail(format!("{key}.{field}"), "must be at least 1");
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(servers: serde_json::Value) -> McpConfig {
        serde_json::from_value(serde_json::json!({ "servers": servers })).unwrap()
    }

    #[test]
    fn a_server_is_a_command_or_a_url_and_its_name_fits_a_tool_name() {
        let ok = config(serde_json::json!({
            "files": {"command": "python3", "args": ["s.py"], "env": {"K": "v"}},
            "web-1": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer t"}}
        }));
        ok.check().unwrap();
        for (servers, says) in [
            (serde_json::json!({"a": {}}), "set `command`"),
            (
                serde_json::json!({"a": {"command": "x", "url": "http://h"}}),
                "not both",
            ),
            (serde_json::json!({"a_b": {"command": "x"}}), "[a-zA-Z0-9-]"),
            (serde_json::json!({"a": {"url": "ftp://h"}}), "http://"),
            (
                serde_json::json!({"a": {"url": "http://h", "args": ["x"]}}),
                "`command` servers",
            ),
            (
                serde_json::json!({"a": {"command": "x", "timeoutMs": 0}}),
                "at least 1",
            ),
        ] {
            let err = config(servers.clone()).check().unwrap_err();
            assert!(err.to_string().contains(says), "{servers}: {err}");
        }
    }
}
