//! What the OpenAI-shaped endpoints share: the agent a `model` names, the
//! text and images of a message's content, and the session a request runs in.

use std::sync::Arc;

use axum::http::HeaderMap;
use clawhost_agent_core::{Image, Message, UserInput, MAX_IMAGES_PER_MESSAGE};
use serde_json::Value;

use crate::{ApiError, Gateway};

/// The header naming a session, in requests and responses.
pub const SESSION_HEADER: &str = "x-clawhost-session";

/// An image from a URL a client sent (`https:` or a base64 `data:` URL).
pub fn image_of(url: &str) -> Result<Image, ApiError> {
    Image::from_url(url).map_err(|e| ApiError::bad_request(format!("image refused: {e}")))
}

/// The text and images of a message's content: a string, or parts — text
/// (`text`, and the Responses API's `input_text` / `output_text`) and
/// images (Chat Completions' `image_url`, Responses' `input_image`).
fn content_of(content: Option<&Value>) -> Result<UserInput, ApiError> {
    match content {
        None | Some(Value::Null) => Ok(UserInput::default()),
        Some(Value::String(s)) => Ok(UserInput::from(s.as_str())),
        Some(Value::Array(parts)) => {
            let mut input = UserInput::default();
            for p in parts {
                let url = match p["type"].as_str() {
                    Some("text" | "input_text" | "output_text") => {
                        let text = p["text"].as_str().ok_or_else(|| {
                            ApiError::bad_request("a text part needs a string `text`")
                        })?;
                        input.text.push_str(text);
                        continue;
                    }
                    Some("image_url") => p["image_url"]["url"].as_str(),
                    Some("input_image") => p["image_url"].as_str(),
                    kind => {
                        return Err(ApiError::bad_request(format!(
                            "content parts of type {} are not supported; send text and images",
                            kind.unwrap_or("(none)")
                        )))
                    }
                };
                let url = url.ok_or_else(|| {
                    ApiError::bad_request("an image part needs its `image_url` URL")
                })?;
                if input.images.len() == MAX_IMAGES_PER_MESSAGE {
                    return Err(ApiError::bad_request(format!(
                        "at most {MAX_IMAGES_PER_MESSAGE} images per message"
                    )));
                }
                input.images.push(image_of(url)?);
            }
            Ok(input)
        }
        Some(_) => Err(ApiError::bad_request(
            "`content` must be a string or an array of content parts",
        )),
    }
}

/// The agent a `model` names.
pub fn agent_of(gw: &Gateway, model: &str) -> Result<String, ApiError> {
    let agent = model.strip_prefix("agent/").unwrap_or(model);
    if gw.host.generation(agent).is_some() {
        return Ok(agent.to_string());
    }
    let known: Vec<String> = agents(gw);
    Err(ApiError::not_found(format!(
        "no agent `{agent}`: `model` names an agent here ({})",
        known.join(", ")
    )))
}

pub fn agents(gw: &Gateway) -> Vec<String> {
    gw.host.generations().agents.keys().cloned().collect()
}

/// The session a request continues (the `X-Clawhost-Session` header, else
/// `named` from the body), or a new one holding `history` (the earlier
/// messages of a client that resends the conversation).
pub async fn session_for(
    gw: &Gateway,
    agent: &str,
    headers: &HeaderMap,
    named: Option<String>,
    history: &[Message],
) -> Result<String, ApiError> {
    let named = match headers.get(SESSION_HEADER) {
        // Not text: never a session of ours, and never a new one instead.
        Some(v) => Some(
            v.to_str()
                .map_err(|_| {
                    ApiError::bad_request(format!("{SESSION_HEADER} is not a session id"))
                })?
                .to_string(),
        ),
        None => named,
    };
    Ok(match named {
        Some(id) => {
            gw.host.store().exists(agent, &id)?;
            id
        }
        None => gw.host.create_session(agent, history).await?,
    })
}

/// Start an OpenAI-shaped request's turn: in the session the request names
/// (see [`session_for`]) or a new one holding `history`, with approval
/// requests answered by the configured policy (such a client cannot answer
/// them). Returns the session and the live turn.
pub async fn start_turn(
    gw: &Arc<Gateway>,
    slot: crate::clients::TurnSlot,
    agent: String,
    headers: &HeaderMap,
    named: Option<String>,
    (history, message): (Vec<Message>, UserInput),
) -> Result<(String, crate::turn::LiveTurn), ApiError> {
    let session = session_for(gw, &agent, headers, named, &history).await?;
    let live = crate::turn::start(
        gw,
        slot,
        clawhost_runner::TurnRequest {
            agent,
            session: Some(session.clone()),
            message: message.text,
            images: message.images,
            model: None,
        },
        crate::turn::Answers::Policy,
    );
    Ok((session, live))
}

/// The earlier messages and the user's new one, from `(role, content)`
/// pairs: `system`/`developer` messages are not used (the agent's own system
/// prompt applies); the last message must be the user's.
pub fn conversation<'a>(
    messages: impl IntoIterator<Item = (Option<&'a str>, Option<&'a Value>)>,
) -> Result<(Vec<Message>, UserInput), ApiError> {
    let mut history = Vec::new();
    for (role, content) in messages {
        match role {
            Some("system" | "developer") => {}
            Some("user") => history.push(content_of(content)?.message()),
            Some("assistant") => {
                let said = content_of(content)?;
                if !said.images.is_empty() {
                    return Err(ApiError::bad_request(
                        "an assistant message cannot carry images",
                    ));
                }
                history.push(Message::assistant(said.text))
            }
            other => {
                return Err(ApiError::bad_request(format!(
                "messages of role {other:?} are not supported: the agent's tools run on the host"
            )))
            }
        }
    }
    match history.pop() {
        Some(Message::User { text, images }) => Ok((history, UserInput { text, images })),
        _ => Err(ApiError::bad_request("the last message must be the user's")),
    }
}

/// `response` naming its session in the `X-Clawhost-Session` header.
pub fn with_session(
    mut response: axum::response::Response,
    session: &str,
) -> axum::response::Response {
    if let Ok(v) = axum::http::HeaderValue::from_str(session) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// Seconds since the Unix epoch (the `created` of replies).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}
