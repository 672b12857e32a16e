//! One MCP server's connection: started (a program over stdio, or a
//! Streamable HTTP endpoint), restarted with backoff when it dies, and shut
//! down with the generation that owns it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_config::McpServerConfig;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt};
use serde_json::Value;

use crate::McpError;

/// Longest wait before a dead server is started again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// First wait after a failed start.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Most bytes of a server's stderr logged per line.
const STDERR_LINE: usize = 2_000;

/// What the host tells a server about itself, and hears of its tool list.
#[derive(Clone)]
struct Handler {
    /// Set when the server says its tools changed.
    stale: Arc<AtomicBool>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.stale.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("clawhost", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

type Client = RunningService<RoleClient, Handler>;

/// The handshake: the current revision (`server/discover`, 2026-07-28)
/// first, falling back to `initialize` at the previous one (2025-11-25)
/// for a server that does not know `server/discover`.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// The protocol revision `client` negotiated.
fn protocol(client: &Client) -> String {
    client
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default()
}

/// At a revision without `initialize` (2026-07-28 on), a server's change
/// notifications reach only a `subscriptions/listen` stream the client
/// opened: open one for `tools/list_changed` when the server has them, and
/// mark the catalog stale at each. The task ends with the connection.
fn listen_for_tool_changes(client: &Client, server: &str, stale: Arc<AtomicBool>) {
    let Some(info) = client.peer_info() else {
        return;
    };
    let announces = info
        .capabilities
        .tools
        .as_ref()
        .and_then(|t| t.list_changed)
        .unwrap_or(false);
    if info.protocol_version.has_initialize() || !announces {
        return;
    }
    let peer: Peer<RoleClient> = client.peer().clone();
    let server = server.to_string();
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match peer.listen(filter).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(%server, "MCP server refused `subscriptions/listen`: {e}");
                return;
            }
        };
        while let Ok(Some(notification)) = subscription.next().await {
            if matches!(
                notification,
                ServerNotification::ToolListChangedNotification(_)
            ) {
                stale.store(true, Ordering::SeqCst);
            }
        }
    });
}

/// A live connection and, for a stdio server, its process group, killed
/// when the connection goes.
struct Live {
    client: Client,
    _group: KillGroup,
}

#[derive(Default)]
struct State {
    live: Option<Arc<Live>>,
    /// Failed starts in a row.
    failures: u32,
    /// No start before this, after a failure.
    retry_at: Option<Instant>,
    /// Why the last start failed.
    last_error: Option<String>,
}

/// One configured server.
pub(crate) struct Connection {
    pub(crate) name: String,
    config: McpServerConfig,
    base_dir: PathBuf,
    state: tokio::sync::Mutex<State>,
    stale: Arc<AtomicBool>,
}

impl Connection {
    pub(crate) fn new(name: &str, config: &McpServerConfig, base_dir: &std::path::Path) -> Self {
        Self {
            name: name.to_string(),
            config: config.clone(),
            base_dir: base_dir.to_path_buf(),
            state: tokio::sync::Mutex::new(State::default()),
            stale: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The server's settings.
    pub(crate) fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// Whether the server said its tools changed since it was listed.
    pub(crate) fn stale(&self) -> bool {
        self.stale.load(Ordering::SeqCst)
    }

    /// Largest message accepted from the server.
    fn max_bytes(&self) -> usize {
        usize::try_from(self.config.max_result_kb.saturating_mul(1024)).unwrap_or(usize::MAX)
    }

    /// The live connection, started now if there is none (and the backoff
    /// after a failed start has passed).
    async fn live(&self) -> Result<Arc<Live>, McpError> {
        let mut state = self.state.lock().await;
        if let Some(live) = &state.live {
            if !live.client.is_closed() {
                return Ok(live.clone());
            }
            tracing::warn!(server = %self.name, "MCP server connection closed; starting it again");
            state.live = None;
        }
        if let Some(at) = state.retry_at {
            let now = Instant::now();
            if at > now {
                return Err(McpError::Backoff {
                    server: self.name.clone(),
                    wait_ms: (at - now).as_millis() as u64,
                    last: state.last_error.clone().unwrap_or_default(),
                });
            }
        }
        let timeout = Duration::from_millis(self.config.start_timeout_ms);
        let started = match tokio::time::timeout(timeout, self.start()).await {
            Ok(result) => result,
            Err(_) => Err(McpError::Start {
                server: self.name.clone(),
                reason: format!(
                    "no answer to `initialize` in {} ms (startTimeoutMs)",
                    self.config.start_timeout_ms
                ),
            }),
        };
        match started {
            Ok(live) => {
                listen_for_tool_changes(&live.client, &self.name, self.stale.clone());
                let live = Arc::new(live);
                *state = State {
                    live: Some(live.clone()),
                    ..State::default()
                };
                Ok(live)
            }
            Err(e) => {
                state.failures = state.failures.saturating_add(1);
                let backoff = FIRST_BACKOFF
                    .saturating_mul(1 << state.failures.min(8).saturating_sub(1))
                    .min(MAX_BACKOFF);
                state.retry_at = Some(Instant::now() + backoff);
                state.last_error = Some(e.to_string());
                Err(e)
            }
        }
    }

    async fn start(&self) -> Result<Live, McpError> {
        let handler = Handler {
            stale: self.stale.clone(),
        };
        let fail = |reason: String| McpError::Start {
            server: self.name.clone(),
            reason,
        };
        if let Some(url) = &self.config.url {
            let transport = crate::http::transport(url, &self.config.headers, self.max_bytes())
                .map_err(fail)?;
            let client = handler
                .serve_with_lifecycle(transport, lifecycle())
                .await
                .map_err(|e| fail(e.to_string()))?;
            return Ok(Live {
                client,
                _group: KillGroup(None),
            });
        }
        let (transport, group) = crate::stdio::spawn(
            &self.name,
            &self.config,
            &self.base_dir,
            self.max_bytes(),
            STDERR_LINE,
        )
        .map_err(fail)?;
        // From here a failed start kills the process with the group.
        let guard = KillGroup(Some(group));
        let client = handler
            .serve_with_lifecycle(transport, lifecycle())
            .await
            .map_err(|e| fail(e.to_string()))?;
        Ok(Live {
            client,
            _group: guard,
        })
    }

    /// The protocol revision the server speaks, and its tools as JSON
    /// (`name`, `description`, `inputSchema`), every page of them; the
    /// server is started if it is not running.
    pub(crate) async fn list_tools(&self) -> Result<(String, Vec<Value>), McpError> {
        let live = self.live().await?;
        self.stale.store(false, Ordering::SeqCst);
        let timeout = Duration::from_millis(self.config.start_timeout_ms);
        let tools = tokio::time::timeout(timeout, live.client.peer().list_all_tools())
            .await
            .map_err(|_| McpError::Start {
                server: self.name.clone(),
                reason: format!("no answer to `tools/list` in {} ms", timeout.as_millis()),
            })?
            .map_err(|e| McpError::Start {
                server: self.name.clone(),
                reason: format!("`tools/list` failed: {e}"),
            })?;
        let tools = tools
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        Ok((protocol(&live.client), tools))
    }

    /// Call `tool` (its name on the server) with `arguments`; the result
    /// as JSON. Dropping the future cancels the call on the server.
    pub(crate) async fn call(&self, tool: &str, arguments: Value) -> Result<Value, McpError> {
        let live = self.live().await?;
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let call = live.client.peer().call_tool(params);
        let result = match tokio::time::timeout(timeout, call).await {
            Err(_) => {
                return Err(McpError::Timeout {
                    server: self.name.clone(),
                    timeout_ms: self.config.timeout_ms,
                })
            }
            Ok(result) => result,
        };
        match result {
            Ok(result) => serde_json::to_value(&result).map_err(|e| McpError::Call {
                server: self.name.clone(),
                reason: e.to_string(),
            }),
            Err(e) => {
                let closed = live.client.is_closed()
                    || matches!(
                        e,
                        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)
                    );
                if closed {
                    // Started again at the next call.
                    let mut state = self.state.lock().await;
                    if state.live.as_ref().is_some_and(|l| Arc::ptr_eq(l, &live)) {
                        state.live = None;
                    }
                    return Err(McpError::Exited {
                        server: self.name.clone(),
                        reason: e.to_string(),
                    });
                }
                Err(McpError::Call {
                    server: self.name.clone(),
                    reason: e.to_string(),
                })
            }
        }
    }

    /// Stop the server (its process group, for a stdio server).
    pub(crate) async fn shut_down(&self) {
        let live = self.state.lock().await.live.take();
        if let Some(live) = live {
            live.client.cancellation_token().cancel();
        }
    }
}

/// Kills a process group (if any) when dropped.
struct KillGroup(Option<u32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pid) = self
            .0
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}
