//! Request bodies: JSON within `gateway.limits` (bytes, and messages per
//! request counted while parsing, so a request of 300,000 messages is
//! refused at the 2,049th, not held whole), every refusal in OpenAI's error
//! shape.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::{header, StatusCode};
use serde::de::{DeserializeOwned, Deserializer, Error as _, SeqAccess, Visitor};
use serde::Deserialize;

use crate::{ApiError, Gateway};

thread_local! {
    /// The item bound of the parse running on this thread (parsing is
    /// synchronous: set just before, reset just after).
    static MAX_ITEMS: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// What a bounded list's error starts with.
const TOO_MANY: &str = "too many items: at most";

/// A JSON body, parsed within the gateway's limits.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<Gateway>> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, gw: &Arc<Gateway>) -> Result<Self, ApiError> {
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| {
                let v = v.trim().to_ascii_lowercase();
                v == "application/json" || v.ends_with("+json")
            });
        if !json {
            return Err(ApiError::refused(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON, with `Content-Type: application/json`",
            ));
        }
        let bytes = Bytes::from_request(req, gw).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::refused(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request_too_large",
                    format!(
                        "the body is over {} KiB (gateway.limits.maxRequestKb)",
                        gw.limits.max_request_kb
                    ),
                )
            } else {
                ApiError::bad_request(format!("the body could not be read: {}", e.body_text()))
            }
        })?;
        let max = gw.limits.max_messages;
        parse(&bytes, max).map(ApiJson).map_err(|e| {
            let text = e.to_string();
            if text.starts_with(TOO_MANY) {
                ApiError::refused(
                    StatusCode::BAD_REQUEST,
                    "too_many_messages",
                    format!(
                        "a request may carry at most {max} messages (gateway.limits.maxMessages)"
                    ),
                )
            } else {
                let shown = clawhost_agent_core::text::clip(&text, 200);
                ApiError::refused(
                    StatusCode::BAD_REQUEST,
                    "invalid_json",
                    format!("the body is not the expected JSON: {shown}"),
                )
            }
        })
    }
}

impl<T: DeserializeOwned> OptionalFromRequest<Arc<Gateway>> for ApiJson<T> {
    type Rejection = ApiError;

    /// No body (no `Content-Type`) is `None`; any other body must parse.
    async fn from_request(req: Request, gw: &Arc<Gateway>) -> Result<Option<Self>, ApiError> {
        if !req.headers().contains_key(header::CONTENT_TYPE) {
            return Ok(None);
        }
        <Self as FromRequest<Arc<Gateway>>>::from_request(req, gw)
            .await
            .map(Some)
    }
}

/// Parse `bytes` with lists marked [`bounded`] held to `max` items.
fn parse<T: DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T, serde_json::Error> {
    MAX_ITEMS.with(|m| m.set(max));
    let parsed = serde_json::from_slice(bytes);
    MAX_ITEMS.with(|m| m.set(usize::MAX));
    parsed
}

/// A list of at most the running parse's bound (`deserialize_with`).
pub fn bounded<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct Bounded<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Bounded<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let max = MAX_ITEMS.with(Cell::get);
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                if items.len() == max {
                    return Err(A::Error::custom(format!("{TOO_MANY} {max}")));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    d.deserialize_seq(Bounded(PhantomData))
}

/// A string, or a list of at most the running parse's bound, as a JSON
/// value (`deserialize_with`; the Responses API's `input`).
pub fn bounded_text_or_list<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<serde_json::Value, D::Error> {
    struct TextOrList;
    impl<'de> Visitor<'de> for TextOrList {
        type Value = serde_json::Value;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string or a list")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
            Ok(serde_json::Value::String(text.into()))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            let items: Vec<serde_json::Value> =
                bounded(serde::de::value::SeqAccessDeserializer::new(seq))?;
            Ok(serde_json::Value::Array(items))
        }
    }
    d.deserialize_any(TextOrList)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Req {
        #[serde(deserialize_with = "bounded")]
        messages: Vec<serde_json::Value>,
    }

    #[test]
    fn a_list_past_the_bound_stops_the_parse_there() {
        let ok: Req = parse(br#"{"messages": [1, 2, 3]}"#, 3).unwrap();
        assert_eq!(ok.messages.len(), 3);
        let err = parse::<Req>(br#"{"messages": [1, 2, 3, 4]}"#, 3).unwrap_err();
        assert!(err.to_string().starts_with(TOO_MANY), "{err}");
        // The bound is the parse's own: none outside it.
        let free: Req = serde_json::from_slice(br#"{"messages": [1, 2, 3, 4]}"#).unwrap();
        assert_eq!(free.messages.len(), 4);
    }
}
