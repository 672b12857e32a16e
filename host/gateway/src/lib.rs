//! `clawhost gateway`: the agent host behind HTTP. OpenAI-compatible chat
//! completions (where `model` names an agent), clawhost's own run events as
//! server-sent events, the sessions API, health, and reload. Every turn takes
//! the one path of [`AgentHost::run_turn`].

mod accept;
mod approvals;
mod auth;
mod body;
mod chat_completions;
mod clients;
mod error;
mod metrics;
mod request;
mod responses;
mod runs;
mod sessions_api;
mod turn;
mod turn_threads;
mod web_guard;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use clawhost_plugin_runtime::PluginState;
use clawhost_runner::AgentHost;
use serde_json::json;

pub use auth::Token;
pub use error::ApiError;
pub use web_guard::WebGuard;

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

/// What the gateway serves with.
pub struct Gateway {
    host: Arc<AgentHost>,
    token: Option<Token>,
    turn_timeout: Duration,
    draining: AtomicBool,
    approvals: Arc<approvals::Pending>,
    turn_threads: turn_threads::TurnThreads,
    web_guard: WebGuard,
    clients: Arc<clients::Clients>,
    limits: clawhost_config::GatewayLimits,
    metrics: Arc<metrics::Metrics>,
}

impl Gateway {
    /// A gateway over `host`, with the token and turn bound of its config,
    /// and a thread per core to run turns on.
    pub fn new(host: Arc<AgentHost>) -> Result<Arc<Self>, GatewayError> {
        let config = host.runner().config().gateway.clone();
        let turn_threads =
            turn_threads::TurnThreads::per_core().map_err(GatewayError::TurnThreads)?;
        let metrics = Arc::new(metrics::Metrics::new(host.clone()));
        let approvals = Arc::new(approvals::Pending::new(host.store().approvals()));
        Ok(Arc::new(Self {
            host,
            token: config
                .auth
                .token
                .filter(|t| !t.is_empty())
                .map(|t| Token::new(&t)),
            turn_timeout: Duration::from_secs(config.turn_timeout_secs.max(1)),
            draining: AtomicBool::new(false),
            approvals,
            turn_threads,
            web_guard: WebGuard::new(&config.allowed_hosts, &config.allowed_origins),
            clients: clients::Clients::new(config.limits.max_turns_per_client),
            limits: config.limits,
            metrics,
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

    /// The routes. Every request passes the [`WebGuard`], then the token;
    /// bodies are bounded by `gateway.limits`, and a client's turns by
    /// `maxTurnsPerClient`.
    pub fn router(self: &Arc<Self>) -> Router {
        let turns = Router::new()
            .route(
                "/v1/chat/completions",
                post(chat_completions::chat_completions),
            )
            .route("/v1/responses", post(responses::responses))
            .route("/v1/runs", post(runs::run))
            .route_layer(axum::middleware::from_fn_with_state(
                self.clone(),
                clients::one_turn,
            ));
        let api = Router::new()
            .merge(turns)
            .route("/v1/models", get(chat_completions::models))
            .route("/v1/approvals/{id}", post(approvals::answer))
            .route("/v1/sessions", get(sessions_api::list))
            .route(
                "/v1/sessions/{agent}/{id}",
                get(sessions_api::show).delete(sessions_api::delete),
            )
            .route("/v1/sessions/{agent}/{id}/fork", post(sessions_api::fork))
            .route("/admin/reload", post(reload))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics::metrics))
            .route("/v1/plugins", get(plugins))
            .fallback(|| async {
                ApiError::not_found(
                    "no such endpoint: see the gateway section of docs/src/running.md",
                )
            })
            .layer(axum::extract::DefaultBodyLimit::max(
                self.limits.max_request_kb.saturating_mul(1 << 10),
            ))
            .layer(axum::middleware::from_fn_with_state(
                self.clone(),
                auth::require_token,
            ));
        Router::new()
            .route("/healthz", get(|| async { "ok" }))
            .merge(api)
            .layer(axum::middleware::from_fn_with_state(
                self.clone(),
                web_guard::guard,
            ))
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
        let limits = accept::Limits {
            header_read_timeout: Duration::from_millis(self.limits.header_read_timeout_ms),
            max_connections: self.limits.max_connections,
        };
        let result = accept::serve(listener, self.router(), limits, async move {
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
    // The session store answers (a database may be down or restarting).
    let store = match tokio::time::timeout(Duration::from_secs(2), gw.host.store().ready()).await {
        Ok(Ok(())) => json!({"ready": true}),
        Ok(Err(e)) => json!({"ready": false, "error": e.to_string()}),
        Err(_) => json!({"ready": false, "error": "the session store did not answer in 2 s"}),
    };
    let ready = !gw.draining.load(Ordering::SeqCst) && store["ready"] == true;
    // Plugins refusing calls after failing in a row: the gateway still
    // serves, but calls that need them fail (or are blocked, fail-closed).
    let quarantined: Vec<_> = gw
        .host
        .runner()
        .plugins()
        .statuses()
        .into_iter()
        .filter_map(|s| match s.state {
            PluginState::Active => None,
            PluginState::Quarantined {
                reason,
                retry_in_ms,
            } => Some(json!({"id": s.id, "reason": reason, "retryInMs": retry_in_ms})),
        })
        .collect();
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
            "store": store,
            "lastReloadError": gw.host.last_reload_error(),
            "quarantined": quarantined,
        })),
    )
}

/// `GET /v1/plugins`: each plugin's state and call counters (what
/// `clawhost plugins list --gateway` shows).
async fn plugins(State(gw): State<Arc<Gateway>>) -> Json<serde_json::Value> {
    let data: Vec<_> = gw
        .host
        .runner()
        .plugins()
        .statuses()
        .into_iter()
        .map(|s| json!({"id": s.id, "version": s.version, "state": s.state, "stats": s.stats}))
        .collect();
    Json(json!({"object": "list", "data": data}))
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
