//! `POST /v1/runs`: one turn with clawhost's own run events as server-sent
//! events (`event: <kind>`, `data: <the event as JSON>`): text deltas, model
//! replies with their tool calls, hook decisions, approvals, tool results,
//! compactions; then `turn_end` (session, usage) or `error`.

use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Extension;
use clawhost_runner::TurnRequest;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::json;

use crate::body::ApiJson;
use crate::clients::TurnSlot;
use crate::request::agent_of;
use crate::turn::{self, Update};
use crate::{ApiError, Gateway};

/// A run request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunBody {
    /// Agent id (default `main`).
    #[serde(default = "main")]
    agent: String,
    /// Session to continue (default: a new one).
    #[serde(default)]
    session: Option<String>,
    /// The user's message.
    message: String,
    /// Images attached to it: `https:` or base64 `data:` URLs.
    #[serde(default)]
    images: Vec<String>,
    /// A model ref instead of the agent's.
    #[serde(default)]
    model: Option<String>,
    /// Who answers approval requests: `policy` (`approvals.nonInteractive`,
    /// the default) or `client` (`approval_request` events, answered with
    /// `POST /v1/approvals/{id}`).
    #[serde(default)]
    approvals: Option<String>,
}

fn main() -> String {
    "main".into()
}

/// `POST /v1/runs`.
pub(crate) async fn run(
    State(gw): State<Arc<Gateway>>,
    Extension(slot): Extension<TurnSlot>,
    ApiJson(body): ApiJson<RunBody>,
) -> Result<Sse<impl futures::Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError> {
    let answers = match body.approvals.as_deref() {
        None | Some("policy") => turn::Answers::Policy,
        Some("client") => turn::Answers::Client,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`approvals` is `policy` or `client`, not `{other}`"
            )))
        }
    };
    if body.images.len() > clawhost_agent_core::MAX_IMAGES_PER_MESSAGE {
        return Err(ApiError::bad_request(format!(
            "at most {} images per message",
            clawhost_agent_core::MAX_IMAGES_PER_MESSAGE
        )));
    }
    let images = body
        .images
        .iter()
        .map(|url| crate::request::image_of(url))
        .collect::<Result<Vec<_>, _>>()?;
    let agent = agent_of(&gw, &body.agent)?;
    let session = match body.session {
        Some(id) => gw
            .host
            .store()
            .open_read_only(&agent, &id)?
            .id()
            .to_string(),
        None => gw.host.create_session(&agent, &[]).await?,
    };
    let live = turn::start(
        &gw,
        slot,
        TurnRequest {
            agent,
            session: Some(session.clone()),
            message: body.message,
            images,
            model: body.model,
        },
        answers,
    );
    let start = Event::default()
        .event("turn_start")
        .data(json!({"session_id": session, "run_id": live.run_id}).to_string());
    let body = turn::updates(live).map(|update| {
        Ok(match update {
            Update::Event(e) => {
                let value = serde_json::to_value(&e).unwrap_or_default();
                let kind = value["event"].as_str().unwrap_or("event").to_string();
                Event::default().event(kind).data(value.to_string())
            }
            Update::ApprovalRequest(request) => Event::default()
                .event("approval_request")
                .data(request.to_string()),
            Update::Done(Ok(reply)) => Event::default().event("turn_end").data(
                json!({
                    "session_id": reply.session_id,
                    "answer": reply.outcome.answer,
                    "iterations": reply.outcome.iterations,
                    "usage": reply.outcome.usage,
                })
                .to_string(),
            ),
            Update::Done(Err(e)) => Event::default().event("error").data(e.body().to_string()),
        })
    });
    Ok(
        Sse::new(futures::stream::once(async move { Ok(start) }).chain(body))
            .keep_alive(KeepAlive::default()),
    )
}
