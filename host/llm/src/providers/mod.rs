//! Wire formats of the supported provider APIs: request bodies and SSE parsers.

pub mod anthropic;
mod body;
pub mod openai_completions;
pub mod openai_responses;

use clawhost_agent_core::ModelErrorKind;
use serde_json::Value;

pub use body::{RequestBody, Wire};

/// Classify a provider error by its type/code and message (used for HTTP
/// error bodies and for error events inside a stream).
pub fn classify(code: &str, message: &str, status: Option<u16>) -> ModelErrorKind {
    let code = code.to_ascii_lowercase();
    let msg = message.to_ascii_lowercase();
    let overflow = code.contains("context_length")
        || msg.contains("context length")
        || msg.contains("context window")
        || msg.contains("prompt is too long")
        || msg.contains("maximum context")
        || msg.contains("too many tokens");
    if overflow {
        return ModelErrorKind::ContextOverflow;
    }
    if code.contains("model_not_found")
        || (msg.contains("model") && (msg.contains("not found") || msg.contains("does not exist")))
    {
        return ModelErrorKind::UnknownModel;
    }
    match status {
        Some(401 | 403) => return ModelErrorKind::Auth,
        Some(404) => return ModelErrorKind::UnknownModel,
        Some(429) => return ModelErrorKind::RateLimited,
        Some(s) if s >= 500 => return ModelErrorKind::Unavailable,
        Some(_) => {}
        None => {}
    }
    if code.contains("auth") || code.contains("permission") || code.contains("api_key") {
        ModelErrorKind::Auth
    } else if code.contains("rate_limit") {
        ModelErrorKind::RateLimited
    } else if code.contains("overloaded")
        || code.contains("server_error")
        || code.contains("api_error")
    {
        ModelErrorKind::Unavailable
    } else if status.is_some() {
        ModelErrorKind::BadRequest
    } else {
        ModelErrorKind::Other
    }
}

/// Pull `(code, message)` out of an OpenAI- or Anthropic-style error object.
pub fn error_fields(body: &Value) -> (String, String) {
    let err = body.get("error").unwrap_or(body);
    let code = err
        .get("code")
        .and_then(Value::as_str)
        .or_else(|| err.get("type").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string();
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    (code, message)
}

/// A message's text then its images as content parts, each in the API's
/// shape; the text is left out when empty (Anthropic refuses an empty text
/// block, and a part of nothing says nothing elsewhere).
pub(crate) fn text_then_images<'a>(
    text: &'a str,
    images: &'a [clawhost_agent_core::Image],
    text_part: impl Fn(&'a str) -> Wire<'a>,
    image_part: impl Fn(&'a clawhost_agent_core::Image) -> Wire<'a>,
) -> Wire<'a> {
    let text = (!text.is_empty()).then(|| text_part(text));
    Wire::Array(
        text.into_iter()
            .chain(images.iter().map(image_part))
            .collect(),
    )
}

/// Offer tools in a body (`"tools"`), in the API's shape; nothing when there are none.
pub(crate) fn set_tools<'a>(
    body: &mut RequestBody<'a>,
    tools: &'a [clawhost_agent_core::ToolSpec],
    shape: impl Fn(&'a clawhost_agent_core::ToolSpec) -> Wire<'a>,
) {
    if !tools.is_empty() {
        body.set_wire("tools", Wire::Array(tools.iter().map(shape).collect()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_classified_for_the_loop() {
        assert_eq!(
            classify("context_length_exceeded", "", Some(400)),
            ModelErrorKind::ContextOverflow
        );
        assert_eq!(
            classify(
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum",
                Some(400)
            ),
            ModelErrorKind::ContextOverflow
        );
        assert_eq!(
            classify("model_not_found", "", Some(404)),
            ModelErrorKind::UnknownModel
        );
        assert_eq!(
            classify("invalid_api_key", "Incorrect API key", Some(401)),
            ModelErrorKind::Auth
        );
        assert_eq!(
            classify("overloaded_error", "Overloaded", None),
            ModelErrorKind::Unavailable
        );
        assert_eq!(
            classify("invalid_request_error", "bad field", Some(400)),
            ModelErrorKind::BadRequest
        );
    }

    #[test]
    fn model_params_win_and_extra_body_is_flattened() {
        let provider = serde_json::json!({"temperature": 0.1, "top_p": 1})
            .as_object()
            .unwrap()
            .clone();
        let model =
            serde_json::json!({"temperature": 0.7, "extra_body": {"reasoning": {"effort": "low"}}})
                .as_object()
                .unwrap()
                .clone();
        let body = RequestBody::with_params(&[&provider, &model]);
        assert_eq!(
            body.to_value().unwrap(),
            serde_json::json!({"temperature": 0.7, "top_p": 1, "reasoning": {"effort": "low"}})
        );
    }
}
