//! `clawhost mcp serve`: one agent's tools (WASM plugin tools, the built-in
//! host tools and MCP servers' tools that its policy allows) served over MCP,
//! on stdio or Streamable HTTP. Every call takes the host's one dispatch
//! path (policy, schema, `before_tool_call`, approvals, `tool_result`,
//! `after_tool_call`) and is stored in a session per client connection;
//! a plugin keeps its sandbox, so a client never reaches more than its
//! grants. Cancelling a call (`notifications/cancelled`) drops it, which
//! stops the guest; a call that asked for progress gets a notification
//! each second it runs.

mod approve;
mod http;
mod record;

use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_agent_core::{
    ApprovalDecision, Approvals, RunContext, ToolCallRequest, ToolExecutor, ToolOutput,
};
use clawhost_config::NonInteractivePolicy;
use clawhost_mcp_endpoint::call_result;
use clawhost_runner::{AgentHost, EmbeddedRunner};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};

pub use http::{serve_http, HttpOptions};

use record::Recorder;

/// Tools listed per `tools/list` page.
pub const PAGE_SIZE: usize = 50;

/// How often a long call reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The MCP server of one client connection.
#[derive(Clone)]
pub struct ToolServer {
    host: Arc<AgentHost>,
    agent: String,
    recorder: Arc<Recorder>,
}

impl ToolServer {
    /// A server of `agent`'s tools on `host`, with a session of its own.
    pub fn new(host: Arc<AgentHost>, agent: &str) -> Self {
        let recorder = Arc::new(Recorder::new(host.store().clone(), agent));
        Self {
            host,
            agent: agent.to_string(),
            recorder,
        }
    }

    /// The run context of one call.
    fn context(
        &self,
        runner: &EmbeddedRunner,
        peer: &rmcp::service::Peer<RoleServer>,
    ) -> RunContext {
        let model = self
            .host
            .generation(&self.agent)
            .map(|g| g.model.clone())
            .unwrap_or_else(|| "mcp".into());
        let mut ctx = RunContext::new(self.agent.clone(), model);
        let fallback = match runner.config().approvals.non_interactive {
            NonInteractivePolicy::Allow => ApprovalDecision::AllowOnce,
            NonInteractivePolicy::Deny => ApprovalDecision::Deny,
        };
        ctx.approvals = Approvals(Arc::new(approve::ElicitingApprover {
            peer: peer.clone(),
            fallback,
        }));
        ctx
    }
}

/// The name and version of the connected client, for its session.
fn client_name(peer: &rmcp::service::Peer<RoleServer>) -> String {
    peer.peer_info()
        .map(|i| format!("{} {}", i.client_info.name, i.client_info.version))
        .unwrap_or_else(|| "(unnamed)".into())
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("clawhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "The tools of clawhost agent `{}`: each call runs in its plugin's sandbox under the operator's policy, hooks and approvals.",
                self.agent
            ))
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl std::future::Future<Output = Result<ListToolsResult, ErrorData>> + Send + '_ {
        let runner = self.host.runner();
        let specs = runner
            .dispatcher()
            .specs(&RunContext::new(self.agent.clone(), "mcp"));
        let start = match request.and_then(|r| r.cursor) {
            None => Ok(0),
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= specs.len())
                .ok_or_else(|| ErrorData::invalid_params("invalid cursor", None)),
        };
        std::future::ready(start.and_then(|start| {
            let page: Vec<Value> = specs
                .iter()
                .skip(start)
                .take(PAGE_SIZE)
                .map(|s| json!({"name": s.name, "description": s.description, "inputSchema": *s.parameters}))
                .collect();
            let next = (start + PAGE_SIZE < specs.len()).then(|| (start + PAGE_SIZE).to_string());
            let mut result = json!({ "resultType": "complete", "tools": page });
            if let Some(next) = next {
                result["nextCursor"] = json!(next);
            }
            serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
        }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let runner = self.host.runner();
        let mut ctx = self.context(&runner, &context.peer);
        if !runner
            .dispatcher()
            .specs(&ctx)
            .iter()
            .any(|s| s.name == request.name)
        {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`",
                    clawhost_agent_core::text::clip(&request.name, 200)
                ),
                None,
            ));
        }
        ctx.session_id = self.recorder.session(&client_name(&context.peer)).await;
        let call = ToolCallRequest {
            id: format!("mcp-{}", context.id),
            name: request.name.to_string(),
            arguments: Value::Object(request.arguments.unwrap_or_default()),
        };
        let progress = context.meta.get_progress_token();
        let started = Instant::now();
        let dispatcher = runner.dispatcher().clone();
        let run = dispatcher.execute(&call, &ctx);
        tokio::pin!(run);
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        let out = loop {
            tokio::select! {
                out = &mut run => break out,
                _ = context.ct.cancelled() => {
                    // Dropping the call stops the guest at its next yield.
                    ctx.cancel.cancel();
                    // Recorded as what it was; the client no longer waits.
                    let cancelled = ToolOutput {
                        content: "the call was cancelled by the MCP client".into(),
                        is_error: true,
                        images: Vec::new(),
                    };
                    self.recorder.call(&call, &cancelled).await;
                    return Err(ErrorData::internal_error("the call was cancelled by the client", None));
                }
                _ = ticks.tick(), if progress.is_some() => {
                    let param = json!({
                        "progressToken": progress,
                        "progress": started.elapsed().as_secs_f64().floor(),
                        "message": format!("`{}` running for {} s", call.name, started.elapsed().as_secs()),
                    });
                    if let Ok(param) = serde_json::from_value::<ProgressNotificationParam>(param) {
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
            }
        };
        self.recorder.call(&call, &out).await;
        call_result(&out).map(CallToolResponse::Complete)
    }
}

/// Serve `agent`'s tools on stdin/stdout until the client closes them.
pub async fn serve_stdio(host: Arc<AgentHost>, agent: &str) -> anyhow::Result<()> {
    let server = ToolServer::new(host, agent)
        .serve(rmcp::transport::stdio())
        .await?;
    server.waiting().await?;
    Ok(())
}
