//! `clawhost gateway`: the agent host behind HTTP. OpenAI-compatible chat
//! completions (where `model` names an agent), clawhost's own run events as
//! server-sent events, the sessions API, health, and reload. Every turn takes
//! the one path of [`AgentHost::run_turn`].

mod approvals;
mod auth;
mod chat_completions;
mod error;
mod request;
mod responses;
mod runs;
mod sessions_api;
mod turn;
mod turn_threads;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use clawhost_runner::AgentHost;
use serde_json::json;

pub use auth::Token;
pub use error::ApiError;

/// Why the gateway would not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// `gateway.bind` is not an address.
    #[error("gateway.bind `{0}` is not an address like 127.0.0.1:18789")]
    BadBind(String),
    /// A non-loopback address without a token.
    #[error("gateway.bind {0} is not loopback: set gateway.auth.token (e.g. \"${{CLAWHOST_GATEWAY_TOKEN}}\") so only clients with it get in")]
    OpenWithoutToken(SocketAddr),
    /// The threads turns run on could not be started.
    #[error("starting the turn threads: {0}")]
    TurnThreads(std::io::Error),
    /// The listening socket could not be opened.
    #[error("listening on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}

/// The largest request body taken: room for a conversation with a few
/// images at their 5 MiB limit (axum's default, 2 MiB, would refuse one).
pub const MAX_REQUEST_BYTES: usize = 32 << 20;

/// What the gateway serves with.
pub struct Gateway {
    host: Arc<AgentHost>,
    token: Option<Token>,
    turn_timeout: Duration,
    draining: AtomicBool,
    approvals: Arc<approvals::Pending>,
    turn_threads: turn_threads::TurnThreads,
}

impl Gateway {
    /// A gateway over `host`, with the token and turn bound of its config,
    /// and a thread per core to run turns on.
    pub fn new(host: Arc<AgentHost>) -> Result<Arc<Self>, GatewayError> {
        let config = host.runner().config().gateway.clone();
        let turn_threads =
            turn_threads::TurnThreads::per_core().map_err(GatewayError::TurnThreads)?;
        Ok(Arc::new(Self {
            host,
            token: config
                .auth
                .token
                .filter(|t| !t.is_empty())
                .map(|t| Token::new(&t)),
            turn_timeout: Duration::from_secs(config.turn_timeout_secs.max(1)),
            draining: AtomicBool::new(false),
            approvals: Arc::default(),
            turn_threads,
        }))
    }

    /// Open the listening socket of `bind` (`gateway.bind` unless given),
    /// refusing a non-loopback address without a token.
    pub async fn listen(
        &self,
        bind: Option<&str>,
    ) -> Result<tokio::net::TcpListener, GatewayError> {
        let config = self.host.runner().config().gateway.clone();
        let bind = bind.unwrap_or(&config.bind);
        let addr: SocketAddr = bind
            .parse()
            .map_err(|_| GatewayError::BadBind(bind.to_string()))?;
        if !addr.ip().is_loopback() && self.token.is_none() {
            return Err(GatewayError::OpenWithoutToken(addr));
        }
        tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| GatewayError::Listen { addr, source })
    }

    /// The routes. Request bodies are bounded by [`MAX_REQUEST_BYTES`].
    pub fn router(self: &Arc<Self>) -> Router {
        let api = Router::new()
            .route(
                "/v1/chat/completions",
                post(chat_completions::chat_completions),
            )
            .route("/v1/responses", post(responses::responses))
            .route("/v1/models", get(chat_completions::models))
            .route("/v1/runs", post(runs::run))
            .route("/v1/approvals/{id}", post(approvals::answer))
            .route("/v1/sessions", get(sessions_api::list))
            .route(
                "/v1/sessions/{agent}/{id}",
                get(sessions_api::show).delete(sessions_api::delete),
            )
            .route("/v1/sessions/{agent}/{id}/fork", post(sessions_api::fork))
            .route("/admin/reload", post(reload))
            .route("/readyz", get(readyz))
            .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .layer(axum::middleware::from_fn_with_state(
                self.clone(),
                auth::require_token,
            ));
        Router::new()
            .route("/healthz", get(|| async { "ok" }))
            .merge(api)
            .with_state(self.clone())
    }

    /// Serve on `listener` until `shutdown` completes, then stop taking
    /// requests and let the turns in flight finish. SIGHUP reloads.
    pub async fn serve(
        self: Arc<Self>,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let hup = self.clone().reload_on_sighup();
        let me = self.clone();
        let result = axum::serve(listener, self.router())
            .with_graceful_shutdown(async move {
                shutdown.await;
                me.draining.store(true, Ordering::SeqCst);
                tracing::info!("gateway draining: no new requests; turns in flight finish");
            })
            .await;
        hup.abort();
        self.host.runner().harnesses().dispose_all().await;
        result
    }

    fn reload_on_sighup(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let Ok(mut hup) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            else {
                return;
            };
            while hup.recv().await.is_some() {
                match self.host.reload().await {
                    Ok(r) => tracing::warn!(generation = r.generation, "reloaded on SIGHUP"),
                    Err(e) => tracing::error!(
                        "reload on SIGHUP failed; the previous generation keeps serving: {e:#}"
                    ),
                }
            }
        })
    }

    /// The agent host.
    pub fn host(&self) -> &Arc<AgentHost> {
        &self.host
    }
}

async fn readyz(State(gw): State<Arc<Gateway>>) -> (StatusCode, Json<serde_json::Value>) {
    let generation = gw.host.generations().number;
    let ready = !gw.draining.load(Ordering::SeqCst);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(json!({
            "ready": ready,
            "generation": generation,
            "lastReloadError": gw.host.last_reload_error(),
        })),
    )
}

async fn reload(State(gw): State<Arc<Gateway>>) -> Result<Json<serde_json::Value>, ApiError> {
    let report = gw.host.reload().await.map_err(|e| {
        ApiError::conflict(format!(
            "reload failed; the previous generation keeps serving: {e:#}"
        ))
    })?;
    let plugins: Vec<_> = report
        .plugins
        .iter()
        .map(|r| {
            json!({
                "dir": r.dir,
                "id": r.id,
                "error": r.result.as_ref().err().map(ToString::to_string),
            })
        })
        .collect();
    Ok(Json(
        json!({"generation": report.generation, "plugins": plugins}),
    ))
}
