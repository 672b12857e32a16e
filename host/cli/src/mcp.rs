//! `clawhost mcp`: the MCP servers the agent uses (`list`).

use std::path::Path;

use clawhost_config::Config;
use clawhost_mcp_client::ServerState;

/// What `clawhost mcp` does.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Start each configured MCP server and show its state and tools.
    List {
        /// One JSON document instead of lines.
        #[arg(long)]
        json: bool,
    },
}

/// Run `action` with the config at `path`.
pub async fn run(path: &Path, action: Action) -> anyhow::Result<()> {
    match action {
        Action::List { json } => list(path, json).await,
    }
}

async fn list(path: &Path, json: bool) -> anyhow::Result<()> {
    let config = Config::load(path)?;
    let (runner, _) = clawhost_runner::EmbeddedRunner::wire(config).await?;
    let servers = runner.mcp_servers();
    if json {
        let doc: Vec<serde_json::Value> = servers
            .iter()
            .map(|s| {
                serde_json::json!({
                    "server": s.server,
                    "transport": s.transport,
                    "state": match &s.state {
                        ServerState::Ready => "ready",
                        ServerState::Disabled => "disabled",
                        ServerState::Failed(_) => "failed",
                    },
                    "error": match &s.state {
                        ServerState::Failed(why) => Some(why),
                        _ => None,
                    },
                    "tools": s.tools.iter().map(|(offered, remote)| serde_json::json!({"name": offered, "serverName": remote})).collect::<Vec<_>>(),
                    "withheld": s.withheld.iter().map(|(tool, why)| serde_json::json!({"serverName": tool, "reason": why})).collect::<Vec<_>>(),
                })
            })
            .collect();
        say!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    if servers.is_empty() {
        say!("no MCP servers configured (mcp.servers)");
        return Ok(());
    }
    for s in servers {
        let state = match &s.state {
            ServerState::Ready => format!("ready, {} tool(s)", s.tools.len()),
            ServerState::Disabled => "disabled".into(),
            ServerState::Failed(why) => format!("failed: {why}"),
        };
        say!("{} ({}): {state}", s.server, s.transport);
        for (offered, remote) in &s.tools {
            say!("  {offered}  ({remote})");
        }
        for (tool, why) in &s.withheld {
            say!("  not offered: {tool}: {why}");
        }
    }
    Ok(())
}
