//! `mcp serve --http`: Streamable HTTP on loopback by default, a bearer
//! token required when the operator sets one (and always off loopback),
//! and the `Host` and `Origin` of each request checked against DNS
//! rebinding (the SDK's checks, with loopback origins allowed).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use clawhost_runner::AgentHost;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::ToolServer;

/// How `mcp serve --http` listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Browser origins allowed besides loopback ones (`https://app.example:443`).
    pub origins: Vec<String>,
}

/// Serve `agent`'s tools at `http://<bind>/mcp` until `shutdown` is
/// cancelled; `ready` gets the address bound (port 0 picks one).
pub async fn serve_http(
    host: Arc<AgentHost>,
    agent: &str,
    options: HttpOptions,
    ready: impl FnOnce(SocketAddr),
    shutdown: tokio_util::sync::CancellationToken,
) -> anyhow::Result<()> {
    if !options.bind.ip().is_loopback() && options.token.is_none() {
        anyhow::bail!(
            "`mcp serve --http {}` listens beyond loopback: set a token (--token-env VAR) so only your clients get in",
            options.bind
        );
    }
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    let bound = listener.local_addr()?;
    let mut origins = vec![
        "http://localhost:*".to_string(),
        "http://127.0.0.1:*".to_string(),
        "http://[::1]:*".to_string(),
    ];
    origins.extend(options.origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default().with_allowed_origins(origins);
    config.cancellation_token = shutdown.child_token();
    if !bound.ip().is_loopback() {
        // Reached by its address or a name the operator chose: the token
        // guards it instead of the Host check.
        config = config.disable_allowed_hosts();
    }
    let agent = agent.to_string();
    let service = StreamableHttpService::new(
        move || Ok(ToolServer::new(host.clone(), &agent)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token: Arc<Option<String>> = Arc::new(options.token);
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let token = token.clone();
                async move { clawhost_mcp_endpoint::bearer(token.as_deref(), request, next).await }
            },
        ));
    ready(bound);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
}
