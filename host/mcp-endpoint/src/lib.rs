//! One turn's tools served over MCP to the native runtime running the turn
//! (an ACP agent handed the endpoint as an HTTP MCP server): Streamable
//! HTTP on a loopback port of its own, a bearer token made for the turn,
//! gone when the turn ends. Each call takes the turn's own dispatch path
//! ([`TurnServices::call_tool`]: policy, schema, hooks, the turn's
//! approvals) and is recorded in the turn's mirror, call and result.

use std::sync::{Arc, Weak};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use clawhost_agent_core::{
    Image, ToolCallRequest, ToolEndpoint, ToolEndpoints, ToolOutput, TurnServices,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// Serves each turn that asks its own MCP endpoint ([`ToolEndpoints`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct McpToolEndpoints;

/// Stops a turn's endpoint when dropped (with the turn).
struct Serving(CancellationToken);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl ToolEndpoints for McpToolEndpoints {
    fn open(
        &self,
        turn: Weak<dyn TurnServices>,
    ) -> Result<(ToolEndpoint, Box<dyn Send + Sync>), String> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| format!("cannot listen on loopback for the turn's tools: {e}"))?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("cannot listen on loopback for the turn's tools: {e}"))?;
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| format!("cannot listen on loopback for the turn's tools: {e}"))?;
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| format!("no randomness for a token: {e}"))?;
        let token = hex::encode(secret);
        let stop = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default();
        config.cancellation_token = stop.child_token();
        let service = StreamableHttpService::new(
            move || Ok(TurnTools { turn: turn.clone() }),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let expected: Arc<str> = token.clone().into();
        let app =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |request: Request, next: Next| {
                        let expected = expected.clone();
                        async move { bearer(Some(&expected), request, next).await }
                    },
                ));
        let until = stop.clone();
        tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move { until.cancelled().await })
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "the turn's MCP endpoint stopped");
            }
        });
        let endpoint = ToolEndpoint {
            url: format!("http://{bound}/mcp"),
            token,
        };
        Ok((endpoint, Box::new(Serving(stop))))
    }
}

/// The MCP server of one turn's tools.
#[derive(Clone)]
struct TurnTools {
    turn: Weak<dyn TurnServices>,
}

impl TurnTools {
    fn turn(&self) -> Result<Arc<dyn TurnServices>, ErrorData> {
        self.turn
            .upgrade()
            .ok_or_else(|| ErrorData::invalid_request("the turn has ended", None))
    }
}

impl ServerHandler for TurnTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("clawhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "This turn's tools on clawhost: each call runs under the operator's policy, hooks and approvals.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Value> = self
            .turn()?
            .tools()
            .iter()
            .map(|s| json!({"name": s.name, "description": s.description, "inputSchema": *s.parameters}))
            .collect();
        serde_json::from_value(json!({"resultType": "complete", "tools": tools}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let turn = self.turn()?;
        if !turn.tools().iter().any(|s| s.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`",
                    clawhost_agent_core::text::clip(&request.name, 200)
                ),
                None,
            ));
        }
        let call = ToolCallRequest {
            id: format!("mcp-{}", context.id),
            name: request.name.to_string(),
            arguments: Value::Object(request.arguments.unwrap_or_default()),
        };
        // The mirror gets the call, then (from the dispatch path) its result.
        turn.record_reply(String::new(), vec![call.clone()]);
        let output = turn
            .call_tool(call)
            .await
            .map_err(|stopped| ErrorData::internal_error(stopped.to_string(), None))?;
        call_result(&output).map(CallToolResponse::Complete)
    }
}

/// An MCP tool result of a host tool output.
pub fn call_result(out: &ToolOutput) -> Result<CallToolResult, ErrorData> {
    let mut content = vec![json!({"type": "text", "text": out.content})];
    for image in &out.images {
        match image {
            Image::Base64 { media_type, data } => {
                content.push(json!({"type": "image", "data": data, "mimeType": media_type}))
            }
            Image::Url { url } => content.push(json!({"type": "text", "text": url})),
        }
    }
    // `resultType` is the 2026-07-28 revision's; the SDK drops it for
    // clients on an earlier one.
    serde_json::from_value(
        json!({"resultType": "complete", "content": content, "isError": out.is_error}),
    )
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// Let a request through only with `Authorization: Bearer <token>` (when
/// a token is set), compared in constant time.
pub async fn bearer(token: Option<&str>, request: Request, next: Next) -> Response {
    if let Some(token) = token {
        let given = request
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        let same: bool = subtle::ConstantTimeEq::ct_eq(given.as_bytes(), token.as_bytes()).into();
        if !same {
            return (
                StatusCode::UNAUTHORIZED,
                [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
                "a bearer token is required (Authorization: Bearer <token>)\n",
            )
                .into_response();
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use clawhost_agent_core::{
        Message, ModelError, ModelResponse, NativeCompaction, Refused, TextSink, ToolResultMessage,
        ToolSpec, TurnStopped,
    };

    /// A turn with one tool, `echo`, that answers its arguments.
    struct Turn;

    #[async_trait::async_trait]
    impl TurnServices for Turn {
        async fn complete(
            &self,
            _: Option<String>,
            _: Vec<Message>,
            _: Vec<ToolSpec>,
            _: Option<TextSink>,
        ) -> Result<ModelResponse, ModelError> {
            unimplemented!("not asked")
        }
        async fn call_tool(&self, call: ToolCallRequest) -> Result<ToolOutput, TurnStopped> {
            Ok(ToolOutput {
                content: call.arguments.to_string(),
                is_error: false,
                images: Vec::new(),
            })
        }
        fn tools(&self) -> Vec<ToolSpec> {
            vec![ToolSpec {
                name: "echo".into(),
                description: "echo".into(),
                parameters: json!({"type": "object"}).into(),
            }]
        }
        fn last_model_error(&self) -> Option<ModelError> {
            None
        }
        async fn gate_native(&self, _: ToolCallRequest) -> Result<Value, Refused> {
            Ok(Value::Null)
        }
        fn stream_text(&self, _: &str) {}
        fn record_reply(&self, _: String, _: Vec<ToolCallRequest>) {}
        fn record_tool_result(&self, _: ToolResultMessage) {}
        fn native_thread(&self) -> Option<String> {
            None
        }
        fn set_native_thread(&self, _: String, _: String) {}
        async fn native_compaction(&self, _: NativeCompaction) {}
        fn tool_endpoint(self: Arc<Self>) -> Result<ToolEndpoint, String> {
            Err("not here".into())
        }
    }

    async fn post(url: &str, token: Option<&str>, body: Value) -> (u16, String) {
        let mut request = reqwest::Client::new()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    #[tokio::test]
    async fn a_turns_tools_answer_with_its_token_only_while_it_runs() {
        let turn: Arc<dyn TurnServices> = Arc::new(Turn);
        let (endpoint, guard) = McpToolEndpoints.open(Arc::downgrade(&turn)).unwrap();
        assert!(
            endpoint.url.starts_with("http://127.0.0.1:"),
            "{}",
            endpoint.url
        );
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        for token in [None, Some("wrong")] {
            let (status, _) = post(&endpoint.url, token, init.clone()).await;
            assert_eq!(status, 401);
        }
        let (status, body) = post(&endpoint.url, Some(&endpoint.token), init.clone()).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("clawhost"), "{body}");
        drop(guard);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let refused = reqwest::Client::new().post(&endpoint.url).send().await;
        assert!(refused.is_err(), "the endpoint is gone with the turn");
    }
}
