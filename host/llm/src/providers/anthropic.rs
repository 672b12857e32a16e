//! Anthropic Messages (`POST /v1/messages`, `stream: true`): `message_start`,
//! `content_block_*`, `message_delta`, `message_stop`, `ping`, `error`.

use clawhost_agent_core::{Image, Message, ModelError, ModelRequest, ReasoningBlock, StopReason};
use serde_json::{json, Map, Value};

use super::{classify, error_fields, set_tools, text_then_images, RequestBody, Wire};
use crate::stream::{json as parse_json, EventParser, StreamEvent};

/// The `anthropic-version` header value.
pub const API_VERSION: &str = "2023-06-01";

/// An image block.
fn image(image: &Image) -> Wire<'_> {
    let source = match image {
        Image::Base64 { media_type, data } => Wire::object([
            ("type", Wire::Str("base64")),
            ("media_type", Wire::Str(media_type)),
            ("data", Wire::Str(data)),
        ]),
        Image::Url { url } => Wire::object([("type", Wire::Str("url")), ("url", Wire::Str(url))]),
    };
    Wire::object([("type", Wire::Str("image")), ("source", source)])
}

/// A `text` block.
fn text_block(text: &str) -> Wire<'_> {
    Wire::object([("type", Wire::Str("text")), ("text", Wire::Str(text))])
}

/// The request body; consecutive blocks of one role are merged into one
/// message, as the API requires (tool results follow as `user` content).
/// Thinking blocks go back first in their message, unchanged: the API
/// checks their signatures and refuses a tool result whose call lost them.
pub fn body<'a>(
    request: &'a ModelRequest,
    model_id: &str,
    max_tokens: u64,
    params: &[&Map<String, Value>],
) -> RequestBody<'a> {
    let mut messages: Vec<(&'static str, Vec<Wire<'a>>)> = Vec::new();
    let mut push = |role: &'static str, block: Wire<'a>| match messages.last_mut() {
        Some((r, blocks)) if *r == role => blocks.push(block),
        _ => messages.push((role, vec![block])),
    };
    for m in request.messages.iter().map(|m| &**m) {
        match m {
            Message::User { text, images } => {
                // Images first: Claude reads them best before the question.
                for i in images {
                    push("user", image(i));
                }
                if !text.is_empty() || images.is_empty() {
                    push("user", text_block(text));
                }
            }
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                // Only the requested model's own reasoning goes back.
                let own = reasoning
                    .iter()
                    .filter(|r| r.model_ref == request.model_ref);
                for r in own {
                    match &r.block {
                        ReasoningBlock::Thinking {
                            thinking,
                            signature,
                        } => push(
                            "assistant",
                            Wire::object([
                                ("type", Wire::Str("thinking")),
                                ("thinking", Wire::Str(thinking)),
                                ("signature", Wire::Str(signature)),
                            ]),
                        ),
                        ReasoningBlock::RedactedThinking { data } => push(
                            "assistant",
                            Wire::object([
                                ("type", Wire::Str("redacted_thinking")),
                                ("data", Wire::Str(data)),
                            ]),
                        ),
                        // Another wire format's reasoning means nothing here.
                        ReasoningBlock::ResponsesItem { .. } | ReasoningBlock::Text { .. } => {}
                    }
                }
                if !text.is_empty() {
                    push("assistant", text_block(text));
                }
                for c in tool_calls {
                    push(
                        "assistant",
                        Wire::object([
                            ("type", Wire::Str("tool_use")),
                            ("id", Wire::Str(&c.id)),
                            ("name", Wire::Str(&c.name)),
                            ("input", Wire::Value(&c.arguments)),
                        ]),
                    );
                }
            }
            Message::ToolResult(r) => {
                let content = if r.images.is_empty() {
                    Wire::Str(&r.content)
                } else {
                    text_then_images(&r.content, &r.images, text_block, image)
                };
                push(
                    "user",
                    Wire::object([
                        ("type", Wire::Str("tool_result")),
                        ("tool_use_id", Wire::Str(&r.call_id)),
                        ("content", content),
                        ("is_error", Wire::Bool(r.is_error)),
                    ]),
                )
            }
        }
    }
    let mut body = RequestBody::with_params(params);
    body.set("model", json!(model_id));
    body.fields()
        .entry("max_tokens")
        .or_insert(json!(max_tokens));
    let messages = messages.into_iter().map(|(role, content)| {
        Wire::object([("role", Wire::Str(role)), ("content", Wire::Array(content))])
    });
    body.set_wire("messages", Wire::Array(messages.collect()));
    body.set("stream", json!(true));
    if let Some(system) = &request.system {
        body.set_wire("system", Wire::Str(system));
    }
    set_tools(&mut body, &request.tools, |t| {
        Wire::object([
            ("name", Wire::Str(&t.name)),
            ("description", Wire::Str(&t.description)),
            ("input_schema", Wire::Value(&t.parameters)),
        ])
    });
    body
}

/// Parser of Messages stream events.
#[derive(Debug, Default)]
pub struct Parser {
    done: bool,
    /// Indexes of the `tool_use` blocks: the calls the host runs. Other
    /// blocks with JSON input (`server_tool_use`: web search, code
    /// execution) are the provider's own tools, run on its side, and their
    /// results (`web_search_tool_result`, …) are provider-side content.
    client_tools: std::collections::BTreeSet<usize>,
    /// `thinking` blocks being streamed: their text and signature.
    thinking: std::collections::BTreeMap<usize, (String, String)>,
}

impl EventParser for Parser {
    fn parse(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let payload = parse_json(event, data)?;
        let kind = payload["type"].as_str().unwrap_or(event);
        let index = payload["index"].as_u64().unwrap_or(0) as usize;
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                let usage = &payload["message"]["usage"];
                out.push(StreamEvent::Usage {
                    input: usage["input_tokens"].as_u64(),
                    output: usage["output_tokens"].as_u64(),
                    cache_read: usage["cache_read_input_tokens"].as_u64(),
                    cache_write: usage["cache_creation_input_tokens"].as_u64(),
                });
            }
            "content_block_start" => {
                let block = &payload["content_block"];
                match block["type"].as_str() {
                    Some("tool_use") => {
                        self.client_tools.insert(index);
                        out.push(StreamEvent::ToolCallStart {
                            index,
                            id: block["id"].as_str().unwrap_or_default().into(),
                            name: block["name"].as_str().unwrap_or_default().into(),
                        })
                    }
                    Some("text") => {
                        if let Some(t) = block["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(StreamEvent::TextDelta(t.into()));
                        }
                    }
                    Some("thinking") => {
                        self.thinking.insert(
                            index,
                            (
                                block["thinking"].as_str().unwrap_or_default().into(),
                                block["signature"].as_str().unwrap_or_default().into(),
                            ),
                        );
                    }
                    Some("redacted_thinking") => {
                        out.push(StreamEvent::Reasoning(ReasoningBlock::RedactedThinking {
                            data: block["data"].as_str().unwrap_or_default().into(),
                        }))
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some((thinking, signature)) = self.thinking.remove(&index) {
                    out.push(StreamEvent::Reasoning(ReasoningBlock::Thinking {
                        thinking,
                        signature,
                    }));
                }
            }
            "content_block_delta" => {
                let delta = &payload["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => out.push(StreamEvent::TextDelta(
                        delta["text"].as_str().unwrap_or_default().into(),
                    )),
                    Some("thinking_delta") => {
                        if let Some((text, _)) = self.thinking.get_mut(&index) {
                            text.push_str(delta["thinking"].as_str().unwrap_or_default());
                        }
                    }
                    Some("signature_delta") => {
                        if let Some((_, signature)) = self.thinking.get_mut(&index) {
                            signature.push_str(delta["signature"].as_str().unwrap_or_default());
                        }
                    }
                    Some("input_json_delta") if self.client_tools.contains(&index) => {
                        out.push(StreamEvent::ToolCallArgsDelta {
                            index,
                            fragment: delta["partial_json"].as_str().unwrap_or_default().into(),
                        })
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                // A refusal may say why (`stop_details.explanation`): that
                // is what the user reads, after any text before it.
                let details = &payload["delta"]["stop_details"];
                if let Some(why) = details["explanation"]
                    .as_str()
                    .filter(|w| details["type"] == "refusal" && !w.is_empty())
                {
                    out.push(StreamEvent::Refusal(why.into()));
                }
                if let Some(reason) = payload["delta"]["stop_reason"].as_str() {
                    out.push(StreamEvent::Stop(match reason {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        "refusal" => StopReason::Refusal,
                        _ => StopReason::Other,
                    }));
                }
                let usage = &payload["usage"];
                if usage.is_object() {
                    out.push(StreamEvent::Usage {
                        input: usage["input_tokens"].as_u64(),
                        output: usage["output_tokens"].as_u64(),
                        cache_read: usage["cache_read_input_tokens"].as_u64(),
                        cache_write: usage["cache_creation_input_tokens"].as_u64(),
                    });
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                self.done = true;
                let (code, message) = error_fields(&payload);
                return Err(ModelError::new(classify(&code, &message, None), message));
            }
            _ => {}
        }
        Ok(out)
    }

    fn done(&self) -> bool {
        self.done
    }
}
