//! `POST /v1/chat/completions` and `GET /v1/models`, in OpenAI's wire
//! format: `model` names an agent (`main` or `agent/main`); the agent's own
//! model, tools, hooks and system prompt apply.
//!
//! Sessions: `X-Clawhost-Session: <id>` (or `"session"` in the body)
//! continues a stored session, whose history is the context (earlier
//! messages in the request are then not used). Without one, a new session is
//! created holding the request's earlier messages; its id comes back in the
//! `X-Clawhost-Session` response header and as `session_id` in the body.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use clawhost_agent_core::{StopReason, TurnEvent};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::body::ApiJson;
use crate::clients::TurnSlot;
use crate::request::{agent_of, agents, conversation, start_turn, unix_now, with_session};
use crate::turn::{self, Update};
use crate::{ApiError, Gateway};

#[derive(Debug, Deserialize)]
pub(crate) struct ChatRequest {
    model: String,
    #[serde(deserialize_with = "crate::body::bounded")]
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    n: Option<u64>,
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    functions: Option<Value>,
    #[serde(default)]
    session: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
}

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
    Extension(slot): Extension<TurnSlot>,
    ApiJson(req): ApiJson<ChatRequest>,
) -> Result<Response, ApiError> {
    if req.tools.is_some() || req.functions.is_some() {
        return Err(ApiError::bad_request(
            "`tools` are not accepted: the agent's own tools run on the host",
        ));
    }
    if req.n.is_some_and(|n| n != 1) {
        return Err(ApiError::bad_request("only `n: 1` is supported"));
    }
    let agent = agent_of(&gw, &req.model)?;
    let asked = conversation(
        req.messages
            .iter()
            .map(|m| (Some(m.role.as_str()), m.content.as_ref())),
    )?;
    let (session, live) = start_turn(&gw, slot, agent, &headers, req.session, asked).await?;
    let shape = Shape {
        id: format!("chatcmpl-{}-{}", session, live.run_id),
        created: unix_now(),
        model: req.model,
    };
    let response = if req.stream {
        let include_usage = req.stream_options.is_some_and(|o| o.include_usage);
        stream(shape, live, include_usage).into_response()
    } else {
        whole(shape, live, &session).await?.into_response()
    };
    Ok(with_session(response, &session))
}

/// The fields every chunk and reply carry.
struct Shape {
    id: String,
    created: u64,
    model: String,
}

impl Shape {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}],
        })
    }
}

/// The `finish_reason` of a turn whose last reply stopped for `reason`.
fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::MaxTokens => "length",
        StopReason::Other => "content_filter",
        StopReason::EndTurn | StopReason::ToolUse | StopReason::Refusal => "stop",
    }
}

fn usage_json(usage: clawhost_agent_core::Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    })
}

async fn whole(shape: Shape, live: turn::LiveTurn, session: &str) -> Result<Json<Value>, ApiError> {
    let mut updates = std::pin::pin!(turn::updates(live));
    while let Some(update) = updates.next().await {
        if let Update::Done(result) = update {
            let reply = result?;
            let outcome = &reply.outcome;
            // A refusal is the message's `refusal`, as OpenAI sends one.
            let message = if outcome.stop_reason == StopReason::Refusal {
                json!({"role": "assistant", "content": null, "refusal": outcome.answer})
            } else {
                json!({"role": "assistant", "content": outcome.answer, "refusal": null})
            };
            return Ok(Json(json!({
                "id": shape.id,
                "object": "chat.completion",
                "created": shape.created,
                "model": shape.model,
                "choices": [{
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason(outcome.stop_reason),
                    "logprobs": null,
                }],
                "usage": usage_json(reply.outcome.usage),
                "session_id": session,
            })));
        }
    }
    Err(ApiError::internal("the turn ended without a result"))
}

/// The reply as `chat.completion.chunk` events: the text of every model
/// call as it streams (calls separated by a blank line), then the finish
/// chunk, the usage chunk when asked for, and `[DONE]`.
fn stream(
    shape: Shape,
    live: turn::LiveTurn,
    include_usage: bool,
) -> Sse<impl futures::Stream<Item = Result<Event, std::convert::Infallible>>> {
    let data = |v: Value| Event::default().data(v.to_string());
    let first = data(shape.chunk(json!({"role": "assistant", "content": ""}), None));
    let mut last_iteration = None;
    let body = turn::updates(live).flat_map(move |update| {
        let events: Vec<Event> = match update {
            Update::Event(TurnEvent::TextDelta { iteration, text }) => {
                let sep = match last_iteration.replace(iteration) {
                    Some(i) if i != iteration => "\n\n",
                    _ => "",
                };
                vec![data(
                    shape.chunk(json!({"content": format!("{sep}{text}")}), None),
                )]
            }
            Update::Event(_) | Update::ApprovalRequest(_) => Vec::new(),
            Update::Done(Ok(reply)) => {
                let reason = reply.outcome.stop_reason;
                let mut out = Vec::new();
                if reason == StopReason::Refusal {
                    out.push(data(
                        shape.chunk(json!({"refusal": reply.outcome.answer}), None),
                    ));
                }
                out.push(data(shape.chunk(json!({}), Some(finish_reason(reason)))));
                if include_usage {
                    out.push(data(json!({
                        "id": shape.id,
                        "object": "chat.completion.chunk",
                        "created": shape.created,
                        "model": shape.model,
                        "choices": [],
                        "usage": usage_json(reply.outcome.usage),
                    })));
                }
                out.push(Event::default().data("[DONE]"));
                out
            }
            Update::Done(Err(e)) => vec![data(e.body())],
        };
        futures::stream::iter(events.into_iter().map(Ok))
    });
    Sse::new(futures::stream::once(async move { Ok(first) }).chain(body))
        .keep_alive(KeepAlive::default())
}

/// `GET /v1/models`: the agents, as models.
pub async fn models(State(gw): State<Arc<Gateway>>) -> Json<Value> {
    let data: Vec<Value> = agents(&gw)
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "clawhost"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}
