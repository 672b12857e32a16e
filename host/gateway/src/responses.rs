//! `POST /v1/responses`, in OpenAI's Responses wire format: `model` names an
//! agent; `input` is a string or a list of messages. A response's id names
//! its session, so `previous_response_id` continues the conversation (as
//! does `X-Clawhost-Session`). `instructions` are not used: the agent's own
//! system prompt applies.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use clawhost_agent_core::{Message, StopReason, TurnEvent, TurnOutcome, Usage, UserInput};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::body::ApiJson;
use crate::clients::TurnSlot;
use crate::request::{agent_of, conversation, start_turn, unix_now, with_session};
use crate::turn::{self, Update};
use crate::{ApiError, Gateway};

#[derive(Debug, Deserialize)]
pub(crate) struct ResponsesRequest {
    model: String,
    #[serde(deserialize_with = "crate::body::bounded_text_or_list")]
    input: Value,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    previous_response_id: Option<String>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
}

/// A response id: `resp_<session>_<run>`.
fn response_id(session: &str, run: &str) -> String {
    format!("resp_{session}_{}", run.replace('-', ""))
}

/// The session a response id names.
fn session_of_response(id: &str) -> Result<String, ApiError> {
    id.strip_prefix("resp_")
        .and_then(|rest| rest.rsplit_once('_'))
        .map(|(session, _)| session.to_string())
        .ok_or_else(|| {
            ApiError::bad_request(format!("`{id}` is not a response id of this gateway"))
        })
}

/// The earlier messages and the user's new one: `input` is a string or a
/// list of messages.
fn input_conversation(input: &Value) -> Result<(Vec<Message>, UserInput), ApiError> {
    let items = match input {
        Value::String(text) => return Ok((Vec::new(), UserInput::from(text.as_str()))),
        Value::Array(items) => items,
        _ => {
            return Err(ApiError::bad_request(
                "`input` must be a string or a list of messages",
            ))
        }
    };
    if let Some(kind) = items
        .iter()
        .filter_map(|i| i["type"].as_str())
        .find(|k| *k != "message")
    {
        return Err(ApiError::bad_request(format!(
            "input items of type `{kind}` are not supported: the agent's tools run on the host"
        )));
    }
    conversation(items.iter().map(|i| (i["role"].as_str(), i.get("content"))))
}

/// `POST /v1/responses`.
pub(crate) async fn responses(
    State(gw): State<Arc<Gateway>>,
    headers: HeaderMap,
    Extension(slot): Extension<TurnSlot>,
    ApiJson(req): ApiJson<ResponsesRequest>,
) -> Result<Response, ApiError> {
    if req.tools.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(ApiError::bad_request(
            "`tools` are not accepted: the agent's own tools run on the host",
        ));
    }
    let agent = agent_of(&gw, &req.model)?;
    let asked = input_conversation(&req.input)?;
    let previous = req
        .previous_response_id
        .as_deref()
        .map(session_of_response)
        .transpose()?;
    let (session, live) = start_turn(&gw, slot, agent, &headers, previous, asked).await?;
    let shape = Shape {
        id: response_id(&session, &live.run_id),
        created: unix_now(),
        model: req.model,
        session: session.clone(),
    };
    let response = if req.stream {
        stream(shape, live).into_response()
    } else {
        whole(shape, live).await?.into_response()
    };
    Ok(with_session(response, &session))
}

struct Shape {
    id: String,
    created: u64,
    model: String,
    session: String,
}

impl Shape {
    fn message_id(&self) -> String {
        format!("msg_{}", &self.id["resp_".len()..])
    }

    fn item(&self, text: &str, status: &str, stop: Option<StopReason>) -> Value {
        let content = match (status, stop) {
            ("in_progress", _) => json!([]),
            (_, Some(StopReason::Refusal)) => json!([{"type": "refusal", "refusal": text}]),
            _ => json!([{"type": "output_text", "text": text, "annotations": []}]),
        };
        json!({"id": self.message_id(), "type": "message", "role": "assistant",
               "status": status, "content": content})
    }

    fn response(&self, status: &str, answer: Option<&str>, usage: Option<Usage>) -> Value {
        self.response_stopped(status, answer, usage, None)
    }

    /// A finished turn's response: `incomplete` when its answer was cut off
    /// at the output token limit or stopped by the provider, and a refusal
    /// as a `refusal` content part.
    fn finished(&self, outcome: &TurnOutcome) -> Value {
        let status = match outcome.stop_reason {
            StopReason::MaxTokens | StopReason::Other => "incomplete",
            _ => "completed",
        };
        self.response_stopped(
            status,
            Some(&outcome.answer),
            Some(outcome.usage),
            Some(outcome.stop_reason),
        )
    }

    fn response_stopped(
        &self,
        status: &str,
        answer: Option<&str>,
        usage: Option<Usage>,
        stop: Option<StopReason>,
    ) -> Value {
        let incomplete = match stop {
            Some(StopReason::MaxTokens) => json!({"reason": "max_output_tokens"}),
            Some(StopReason::Other) => json!({"reason": "content_filter"}),
            _ => Value::Null,
        };
        json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model,
            "output": answer.map(|a| vec![self.item(a, status, stop)]).unwrap_or_default(),
            "usage": usage.map(|u| json!({
                "input_tokens": u.input_tokens,
                "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
                "output_tokens": u.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": u.input_tokens + u.output_tokens,
            })),
            "error": null,
            "incomplete_details": incomplete,
            "instructions": null,
            "metadata": {},
            "parallel_tool_calls": false,
            "tool_choice": "auto",
            "tools": [],
            "session_id": self.session,
        })
    }
}

async fn whole(shape: Shape, live: turn::LiveTurn) -> Result<Json<Value>, ApiError> {
    let mut updates = std::pin::pin!(turn::updates(live));
    while let Some(update) = updates.next().await {
        if let Update::Done(result) = update {
            let reply = result?;
            return Ok(Json(shape.finished(&reply.outcome)));
        }
    }
    Err(ApiError::internal("the turn ended without a result"))
}

/// The Responses event sequence: created, the message item and its text
/// part opened, a delta per piece of text as it streams (the text of every
/// model call, separated by a blank line), then the part, item and response
/// completed; `error` if the turn fails.
fn stream(
    shape: Shape,
    live: turn::LiveTurn,
) -> Sse<impl futures::Stream<Item = Result<Event, std::convert::Infallible>>> {
    let mut seq = 0u64;
    let mut text = String::new();
    let mut last_iteration = None;
    let mut event = move |kind: &str, mut body: Value| {
        body["type"] = json!(kind);
        body["sequence_number"] = json!(seq);
        seq += 1;
        Event::default().event(kind).data(body.to_string())
    };
    let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
    let opening = vec![
        event(
            "response.created",
            json!({"response": shape.response("in_progress", None, None)}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": shape.item("", "in_progress", None)}),
        ),
        event(
            "response.content_part.added",
            json!({"item_id": shape.message_id(), "output_index": 0, "content_index": 0, "part": part("")}),
        ),
    ];
    let body = turn::updates(live).flat_map(move |update| {
        let events: Vec<Event> = match update {
            Update::Event(TurnEvent::TextDelta {
                iteration,
                text: piece,
            }) => {
                let sep = match last_iteration.replace(iteration) {
                    Some(i) if i != iteration => "\n\n",
                    _ => "",
                };
                let delta = format!("{sep}{piece}");
                text.push_str(&delta);
                vec![event(
                    "response.output_text.delta",
                    json!({"item_id": shape.message_id(), "output_index": 0, "content_index": 0,
                           "delta": delta, "logprobs": []}),
                )]
            }
            Update::Event(_) | Update::ApprovalRequest(_) => Vec::new(),
            Update::Done(Ok(reply)) => {
                let finished = shape.finished(&reply.outcome);
                let status = finished["status"]
                    .as_str()
                    .unwrap_or("completed")
                    .to_string();
                let last = match status.as_str() {
                    "incomplete" => "response.incomplete",
                    _ => "response.completed",
                };
                let stop = Some(reply.outcome.stop_reason);
                vec![
                    event(
                        "response.output_text.done",
                        json!({"item_id": shape.message_id(), "output_index": 0, "content_index": 0,
                               "text": text, "logprobs": []}),
                    ),
                    event(
                        "response.content_part.done",
                        json!({"item_id": shape.message_id(), "output_index": 0, "content_index": 0,
                               "part": part(&text)}),
                    ),
                    event(
                        "response.output_item.done",
                        json!({"output_index": 0, "item": shape.item(&text, &status, stop)}),
                    ),
                    event(last, json!({"response": finished})),
                ]
            }
            Update::Done(Err(e)) => {
                let error = &e.body()["error"];
                vec![event(
                    "error",
                    json!({"code": error["code"], "message": error["message"], "param": null}),
                )]
            }
        };
        futures::stream::iter(events.into_iter().map(Ok))
    });
    Sse::new(futures::stream::iter(opening.into_iter().map(Ok)).chain(body))
        .keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_id_names_its_session() {
        let id = response_id("1796305810448-347f6f", "run-12");
        assert_eq!(session_of_response(&id).unwrap(), "1796305810448-347f6f");
        assert!(session_of_response("chatcmpl-1").is_err());
    }

    #[test]
    fn input_is_a_string_or_messages_ending_with_the_user() {
        let (h, m) = input_conversation(&json!("hi")).unwrap();
        assert!(h.is_empty());
        assert_eq!(m, UserInput::from("hi"));
        let (h, m) = input_conversation(&json!([
            {"role": "developer", "content": "be brief"},
            {"role": "user", "content": [{"type": "input_text", "text": "a"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "b"}]},
            {"role": "user", "content": "c"}
        ]))
        .unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(m, UserInput::from("c"));
        assert!(
            input_conversation(&json!([{"type": "function_call_output", "output": "x"}])).is_err()
        );
        assert!(input_conversation(&json!([{"role": "assistant", "content": "x"}])).is_err());
    }

    #[test]
    fn input_images_are_checked_where_they_enter() {
        let png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==";
        let (_, m) = input_conversation(&json!([{"role": "user", "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": png}
        ]}]))
        .unwrap();
        assert_eq!(m.text, "what is this?");
        assert_eq!(m.images[0].media_type(), Some("image/png"));
        for bad in [
            "http://example.com/a.png",
            "data:image/png;base64,PHN2Zz4=",
            "file:///etc/passwd",
        ] {
            let err = input_conversation(&json!([{"role": "user", "content": [
                {"type": "input_image", "image_url": bad}
            ]}]))
            .unwrap_err();
            assert!(
                format!("{err:?}").contains("image refused"),
                "{bad}: {err:?}"
            );
        }
    }
}
