//! `clawhost mcp`: the MCP servers the agent uses (`list`), and the agent's
//! own tools served over MCP (`serve`).

use std::path::Path;

use clawhost_config::Config;
use clawhost_mcp_client::ServerState;

/// What `clawhost mcp` does.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Serve an agent's tools (plugins', the host's, MCP servers') over MCP:
    /// stdio by default, or Streamable HTTP with `--http`. Every call takes
    /// the agent's policy, hooks and approvals, and is stored in a session.
    Serve {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
        /// Serve Streamable HTTP at `http://ADDR/mcp` instead of stdio
        /// (loopback unless a token is set).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// The environment variable holding the bearer token HTTP clients
        /// must send.
        #[arg(long, value_name = "VAR", default_value = "CLAWHOST_MCP_TOKEN")]
        token_env: String,
        /// A browser origin allowed besides loopback ones (repeatable).
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        origins: Vec<String>,
    },
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
        Action::Serve {
            agent,
            http,
            token_env,
            origins,
        } => serve(path, &agent, http, &token_env, origins).await,
    }
}

async fn serve(
    path: &Path,
    agent: &str,
    http: Option<std::net::SocketAddr>,
    token_env: &str,
    origins: Vec<String>,
) -> anyhow::Result<()> {
    let config = Config::load(path)?;
    if config.agents.settings(agent).is_none() {
        anyhow::bail!("agent `{agent}` is not configured (agents.list)");
    }
    let (host, reports) =
        clawhost_runner::AgentHost::start(config.clone(), Some(path.to_path_buf())).await?;
    // Said on stderr: stdout is the protocol's.
    for report in &reports {
        let left_out = report
            .id
            .as_deref()
            .is_some_and(|id| crate::plugin_report::left_out(&config, id));
        if let (Err(e), false) = (&report.result, left_out) {
            crate::esay!("plugin {} not loaded: {e}", report.dir.display());
        }
    }
    let host = std::sync::Arc::new(host);
    let Some(bind) = http else {
        return clawhost_mcp_serve::serve_stdio(host, agent).await;
    };
    let token = std::env::var(token_env).ok().filter(|t| !t.is_empty());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    let options = clawhost_mcp_serve::HttpOptions {
        bind,
        token: token.clone(),
        origins,
    };
    let guarded = if token.is_some() {
        format!("bearer token from ${token_env}")
    } else {
        "no token".to_string()
    };
    clawhost_mcp_serve::serve_http(
        host,
        agent,
        options,
        |bound| say!("serving agent {agent}'s tools at http://{bound}/mcp ({guarded})"),
        shutdown,
    )
    .await
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
                    "protocol": s.protocol,
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
            ServerState::Ready => format!("ready, MCP {}, {} tool(s)", s.protocol, s.tools.len()),
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
