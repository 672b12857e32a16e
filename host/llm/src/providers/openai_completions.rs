//! OpenAI Chat Completions (`POST /chat/completions`, `stream: true`), also
//! spoken by OpenAI-compatible servers (Ollama, vLLM, LM Studio …).

use clawhost_agent_core::{
    Message, ModelError, ModelErrorKind, ModelRequest, ReasoningBlock, StopReason,
};
use serde_json::{json, Map, Value};

use super::{classify, error_fields, set_tools, text_then_images, RequestBody, Wire};
use crate::stream::{json as parse_json, EventParser, StreamEvent};

/// An `image_url` part (a URL, or the bytes as a `data:` URL).
fn image(image: &clawhost_agent_core::Image) -> Wire<'_> {
    Wire::object([
        ("type", Wire::Str("image_url")),
        (
            "image_url",
            Wire::object([("url", Wire::String(image.as_url()))]),
        ),
    ])
}

/// A `text` part.
fn text_part(text: &str) -> Wire<'_> {
    Wire::object([("type", Wire::Str("text")), ("text", Wire::Str(text))])
}

/// The request body. A `tool` message holds text only, so the images of a
/// run of tool results follow it in one `user` message, each introduced by
/// the call it came from. Reasoning is not sent back: this API has no field
/// for it (and DeepSeek refuses its `reasoning_content` in a request).
pub fn body<'a>(
    request: &'a ModelRequest,
    model_id: &str,
    params: &[&Map<String, Value>],
) -> RequestBody<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let message = |role: &'static str, content: Wire<'a>| {
        Wire::object([("role", Wire::Str(role)), ("content", content)])
    };
    if let Some(system) = &request.system {
        messages.push(message("system", Wire::Str(system)));
    }
    // Images of the current run of tool results, sent after it.
    let mut tool_images: Vec<Wire<'a>> = Vec::new();
    for m in request.messages.iter().map(|m| &**m) {
        if !matches!(m, Message::ToolResult(_)) && !tool_images.is_empty() {
            messages.push(message(
                "user",
                Wire::Array(std::mem::take(&mut tool_images)),
            ));
        }
        messages.push(match m {
            Message::User { text, images } if images.is_empty() => message("user", Wire::Str(text)),
            Message::User { text, images } => {
                message("user", text_then_images(text, images, text_part, image))
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let content = if text.is_empty() {
                    Wire::Null
                } else {
                    Wire::Str(text)
                };
                let mut msg = message("assistant", content);
                if !tool_calls.is_empty() {
                    let calls = tool_calls.iter().map(|c| {
                        Wire::object([
                            ("id", Wire::Str(&c.id)),
                            ("type", Wire::Str("function")),
                            (
                                "function",
                                Wire::object([
                                    ("name", Wire::Str(&c.name)),
                                    ("arguments", Wire::String(c.arguments.to_string())),
                                ]),
                            ),
                        ])
                    });
                    msg.push("tool_calls", Wire::Array(calls.collect()));
                }
                msg
            }
            Message::ToolResult(r) => {
                if !r.images.is_empty() {
                    tool_images.push(text_part_owned(format!(
                        "Image(s) returned by tool call {} ({}):",
                        r.call_id, r.tool
                    )));
                    tool_images.extend(r.images.iter().map(image));
                }
                Wire::object([
                    ("role", Wire::Str("tool")),
                    ("tool_call_id", Wire::Str(&r.call_id)),
                    ("content", Wire::Str(&r.content)),
                ])
            }
        });
    }
    if !tool_images.is_empty() {
        messages.push(message("user", Wire::Array(tool_images)));
    }
    let mut body = RequestBody::with_params(params);
    body.set("model", json!(model_id));
    body.set_wire("messages", Wire::Array(messages));
    body.set("stream", json!(true));
    body.set("stream_options", json!({"include_usage": true}));
    set_tools(&mut body, &request.tools, |t| {
        Wire::object([
            ("type", Wire::Str("function")),
            (
                "function",
                Wire::object([
                    ("name", Wire::Str(&t.name)),
                    ("description", Wire::Str(&t.description)),
                    ("parameters", Wire::Value(&t.parameters)),
                ]),
            ),
        ])
    });
    body
}

/// A `text` part of a text made for the body.
fn text_part_owned<'a>(text: String) -> Wire<'a> {
    Wire::object([("type", Wire::Str("text")), ("text", Wire::String(text))])
}

/// Parser of `chat.completion.chunk` events, terminated by `data: [DONE]`.
#[derive(Debug, Default)]
pub struct Parser {
    done: bool,
    /// Reasoning text streamed so far (`reasoning_content`, `reasoning`),
    /// handed on as one block when the reply stops.
    reasoning: String,
}

impl Parser {
    fn take_reasoning(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.reasoning.is_empty() {
            let text = std::mem::take(&mut self.reasoning);
            out.push(StreamEvent::Reasoning(ReasoningBlock::Text { text }));
        }
    }
}

fn stop(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

impl EventParser for Parser {
    fn parse(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            let mut out = Vec::new();
            self.take_reasoning(&mut out);
            return Ok(out);
        }
        let chunk = parse_json(event, data)?;
        if chunk.get("error").is_some() {
            let (code, message) = error_fields(&chunk);
            return Err(ModelError::new(classify(&code, &message, None), message));
        }
        let mut out = Vec::new();
        if let Some(other) = chunk["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|c| c["index"].as_u64().filter(|&i| i != 0))
        {
            // `n > 1` (asked by a proxy or a default): never one string of two replies.
            return Err(ModelError::new(
                ModelErrorKind::Protocol,
                format!("the stream carries choice {other}: only one reply per request (n = 1) is supported"),
            ));
        }
        if let Some(choice) = chunk["choices"].get(0) {
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta[key].as_str() {
                    self.reasoning.push_str(text);
                }
            }
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                out.push(StreamEvent::TextDelta(text.to_string()));
            }
            if let Some(text) = delta["refusal"].as_str().filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Refusal(text.to_string()));
            }
            if let Some(calls) = delta["tool_calls"].as_array() {
                for call in calls {
                    let index = call["index"].as_u64().ok_or_else(|| {
                        ModelError::new(
                            ModelErrorKind::Protocol,
                            format!("tool call delta without index: {call}"),
                        )
                    })? as usize;
                    let id = call["id"].as_str().unwrap_or_default();
                    let name = call["function"]["name"].as_str().unwrap_or_default();
                    if !id.is_empty() || !name.is_empty() {
                        out.push(StreamEvent::ToolCallStart {
                            index,
                            id: id.into(),
                            name: name.into(),
                        });
                    }
                    if let Some(args) = call["function"]["arguments"]
                        .as_str()
                        .filter(|a| !a.is_empty())
                    {
                        out.push(StreamEvent::ToolCallArgsDelta {
                            index,
                            fragment: args.into(),
                        });
                    }
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                if reason == "error" {
                    // OpenRouter's mid-stream failure: the reply so far is
                    // not an answer.
                    return Err(ModelError::new(
                        ModelErrorKind::Unavailable,
                        "the provider ended the reply with finish_reason \"error\" mid-stream",
                    ));
                }
                self.take_reasoning(&mut out);
                out.push(StreamEvent::Stop(stop(reason)));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage {
                input: usage["prompt_tokens"].as_u64(),
                output: usage["completion_tokens"].as_u64(),
                cache_read: usage["prompt_tokens_details"]["cached_tokens"].as_u64(),
                cache_write: None,
            });
        }
        Ok(out)
    }

    fn done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_choice_is_refused_not_interleaved() {
        let mut p = Parser::default();
        let first = r#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}"#;
        assert_eq!(
            p.parse("", first).unwrap(),
            vec![StreamEvent::TextDelta("a".into())]
        );
        let second = r#"{"choices":[{"index":1,"delta":{"content":"b"},"finish_reason":null}]}"#;
        let err = p.parse("", second).unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Protocol);
        assert!(err.message.contains("choice 1"), "{}", err.message);
    }

    #[test]
    fn reasoning_deltas_are_kept_as_one_block_before_the_stop() {
        let mut p = Parser::default();
        let mut events = Vec::new();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"Let me "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"42"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ] {
            events.extend(p.parse("", data).unwrap());
        }
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta("42".into()),
                StreamEvent::Reasoning(ReasoningBlock::Text {
                    text: "Let me think.".into()
                }),
                StreamEvent::Stop(StopReason::EndTurn),
            ]
        );
        // OpenRouter's `reasoning`, with no finish_reason before [DONE].
        let mut p = Parser::default();
        p.parse(
            "",
            r#"{"choices":[{"index":0,"delta":{"reasoning":"hm"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            p.parse("", "[DONE]").unwrap(),
            vec![StreamEvent::Reasoning(ReasoningBlock::Text {
                text: "hm".into()
            })]
        );
    }

    #[test]
    fn a_mid_stream_error_ends_the_reply_as_an_error() {
        // OpenRouter's documented shape, and the finish reason alone.
        for chunk in [
            r#"{"error":{"code":"server_error","message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#,
        ] {
            let mut p = Parser::default();
            p.parse(
                "",
                r#"{"choices":[{"index":0,"delta":{"content":"half an"}}]}"#,
            )
            .unwrap();
            let err = p.parse("", chunk).unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Unavailable, "{chunk}: {err}");
        }
    }
}
