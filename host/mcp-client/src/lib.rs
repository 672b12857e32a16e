//! MCP servers as tool sources (`mcp.servers.<name>`): each is started with
//! the generation that configures it (a program over stdio, without a
//! shell, or a Streamable HTTP endpoint), its tools are offered as
//! `mcp__<server>__<tool>` on the host's one dispatch path, a server that
//! dies is started again (with backoff) at its next call, and every server
//! stops when its generation is dropped. A server that says its tools
//! changed marks the catalog stale: the host builds a new generation.

mod connection;
mod http;
mod naming;
mod result;
mod stdio;
mod tool;

use std::sync::Arc;

use clawhost_agent_core::ToolSpec;
use clawhost_config::Config;
use clawhost_tools::{CheckedTool, Tool};
use serde_json::Value;

pub use naming::offered_name;
pub use result::tool_result;

use connection::Connection;

/// Why an MCP server could not serve a call or list its tools.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpError {
    /// The server could not be started or did not complete the handshake.
    #[error("MCP server `{server}` did not start: {reason}")]
    Start {
        /// The server's name.
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// The server failed to start a moment ago; it is not tried again yet.
    #[error("MCP server `{server}` is down (it is started again in {wait_ms} ms): {last}")]
    Backoff {
        /// The server's name.
        server: String,
        /// How long until the next start.
        wait_ms: u64,
        /// Why the last start failed.
        last: String,
    },
    /// The server exited or closed the connection during the call.
    #[error("MCP server `{server}` exited during the call ({reason}); it is started again at the next call")]
    Exited {
        /// The server's name.
        server: String,
        /// What the transport said.
        reason: String,
    },
    /// The call got no answer in time (it was cancelled on the server).
    #[error("MCP server `{server}` gave no answer in {timeout_ms} ms (timeoutMs; a message over maxResultKb is dropped unread); the call was cancelled")]
    Timeout {
        /// The server's name.
        server: String,
        /// The limit.
        timeout_ms: u64,
    },
    /// The server answered the call with a protocol error.
    #[error("MCP server `{server}`: {reason}")]
    Call {
        /// The server's name.
        server: String,
        /// The error.
        reason: String,
    },
}

/// How a server stands after the generation started it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Started and listed its tools.
    Ready,
    /// `enabled: false`.
    Disabled,
    /// Could not start or list its tools (its tools are not offered).
    Failed(String),
}

/// One server, as `clawhost mcp list` and `plugins doctor` show it.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// The server's name.
    pub server: String,
    /// `stdio: <command>` or `http: <url>`.
    pub transport: String,
    /// How it stands.
    pub state: ServerState,
    /// The MCP revision it speaks (empty unless it is ready).
    pub protocol: String,
    /// Its tools that are offered: (offered name, name on the server).
    pub tools: Vec<(String, String)>,
    /// Its tools that are not offered: (name on the server, why).
    pub withheld: Vec<(String, String)>,
}

/// The MCP servers of one generation.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<Arc<Connection>>,
}

impl McpServers {
    /// Start every enabled server of `config` (at once, each within its
    /// `startTimeoutMs`) and list their tools. A server that fails is
    /// reported, not fatal.
    pub async fn start(config: &Config) -> (Self, Vec<Arc<dyn Tool>>, Vec<ServerReport>) {
        let servers = Self {
            servers: config
                .mcp
                .servers
                .iter()
                .map(|(name, server)| Arc::new(Connection::new(name, server, &config.base_dir)))
                .collect(),
        };
        servers.listed().await
    }

    /// The same servers (their connections shared, not restarted) with
    /// their tools listed again: after a server said its tools changed.
    pub async fn relist(&self) -> (Self, Vec<Arc<dyn Tool>>, Vec<ServerReport>) {
        Self {
            servers: self.servers.clone(),
        }
        .listed()
        .await
    }

    /// These servers, their tools and reports (each enabled server is
    /// started if it is not running).
    async fn listed(self) -> (Self, Vec<Arc<dyn Tool>>, Vec<ServerReport>) {
        let listed = futures::future::join_all(self.servers.iter().map(|s| async move {
            if !s.config().enabled {
                return (s.clone(), Ok(None));
            }
            (s.clone(), s.list_tools().await.map(Some))
        }))
        .await;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut reports = Vec::new();
        for (server, listed) in listed {
            let mut report = ServerReport {
                server: server.name.clone(),
                transport: match (&server.config().command, &server.config().url) {
                    (Some(c), _) => format!("stdio: {c}"),
                    (None, Some(u)) => format!("http: {u}"),
                    (None, None) => String::new(),
                },
                state: ServerState::Ready,
                protocol: String::new(),
                tools: Vec::new(),
                withheld: Vec::new(),
            };
            match listed {
                Ok(None) => report.state = ServerState::Disabled,
                Err(e) => report.state = ServerState::Failed(e.to_string()),
                Ok(Some((protocol, listed))) => {
                    report.protocol = protocol;
                    for tool in listed {
                        match checked(&server, &tool) {
                            Ok(t) => {
                                report
                                    .tools
                                    .push((t.checked.spec.name.clone(), t.remote.clone()));
                                tools.push(Arc::new(t));
                            }
                            Err((name, why)) => report.withheld.push((name, why)),
                        }
                    }
                }
            }
            reports.push(report);
        }
        (self, tools, reports)
    }

    /// Whether a server said its tools changed since they were listed.
    pub fn stale(&self) -> bool {
        self.servers.iter().any(|s| s.stale())
    }

    /// Stop every server now (they stop anyway when dropped).
    pub async fn shut_down(&self) {
        for server in &self.servers {
            server.shut_down().await;
        }
    }
}

/// A listed tool checked as the host's own are (name, schema), or its
/// name and why it is not offered.
fn checked(server: &Arc<Connection>, tool: &Value) -> Result<tool::McpTool, (String, String)> {
    let remote = tool["name"].as_str().unwrap_or_default().to_string();
    let spec = ToolSpec {
        name: offered_name(&server.name, &remote),
        description: tool["description"].as_str().unwrap_or_default().to_string(),
        parameters: Arc::new(tool["inputSchema"].clone()),
    };
    let checked = CheckedTool::check(spec).map_err(|e| (remote.clone(), e.to_string()))?;
    Ok(tool::McpTool {
        checked,
        remote,
        server: server.clone(),
    })
}
