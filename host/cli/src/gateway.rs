//! `clawhost gateway`: the agent host as a long-running HTTP server.

use std::path::Path;
use std::sync::Arc;

use clawhost_config::Config;
use clawhost_gateway::Gateway;
use clawhost_runner::AgentHost;

use crate::transcript::render_refusal;

/// Serve until Ctrl-C or SIGTERM, then drain the turns in flight.
pub async fn run(config_path: &Path, bind: Option<&str>) -> anyhow::Result<()> {
    let config = Config::load(config_path)?;
    let (host, reports) = AgentHost::start(config, Some(config_path.to_path_buf())).await?;
    for line in reports.iter().filter_map(render_refusal) {
        esay!("{line}");
    }
    let gateway = Gateway::new(Arc::new(host))?;
    let listener = gateway.listen(bind).await?;
    let addr = listener.local_addr()?;
    say!("gateway listening on http://{addr} (POST /v1/chat/completions, /v1/runs; GET /v1/sessions, /healthz)");
    gateway.serve(listener, shutdown_signal()).await?;
    esay!("gateway stopped");
    Ok(())
}

async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
