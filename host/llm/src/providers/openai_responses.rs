//! OpenAI Responses (`POST /responses`, `stream: true`): typed SSE events
//! such as `response.output_text.delta` and `response.completed`.

use clawhost_agent_core::{Image, Message, ModelError, ModelRequest, ReasoningBlock, StopReason};
use serde_json::{json, Map, Value};

use super::{classify, error_fields, set_tools, text_then_images, RequestBody, Wire};
use crate::stream::{json as parse_json, EventParser, StreamEvent};

/// An `input_image` part (a URL, or the bytes as a `data:` URL).
fn image(image: &Image) -> Wire<'_> {
    Wire::object([
        ("type", Wire::Str("input_image")),
        ("image_url", Wire::String(image.as_url())),
        ("detail", Wire::Str("auto")),
    ])
}

/// Text (when there is some) then images, as `input_text` / `input_image` parts.
fn parts<'a>(text: &'a str, images: &'a [Image]) -> Wire<'a> {
    text_then_images(
        text,
        images,
        |t| Wire::object([("type", Wire::Str("input_text")), ("text", Wire::Str(t))]),
        image,
    )
}

/// The request body. The `reasoning` items of earlier replies go back
/// unchanged before the reply they preceded, so a reasoning model continues
/// its thought after a tool call; with `store: false` and reasoning asked
/// for, their `encrypted_content` is requested (`include`), since the
/// server keeps nothing.
pub fn body<'a>(
    request: &'a ModelRequest,
    model_id: &str,
    params: &[&Map<String, Value>],
) -> RequestBody<'a> {
    let mut input = Vec::with_capacity(request.messages.len());
    let message = |role: &'static str, content: Wire<'a>| {
        Wire::object([("role", Wire::Str(role)), ("content", content)])
    };
    for m in request.messages.iter().map(|m| &**m) {
        match m {
            Message::User { text, images } if images.is_empty() => {
                input.push(message("user", Wire::Str(text)))
            }
            Message::User { text, images } => input.push(message("user", parts(text, images))),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                // Only the requested model's own reasoning goes back.
                for r in reasoning
                    .iter()
                    .filter(|r| r.model_ref == request.model_ref)
                {
                    if let ReasoningBlock::ResponsesItem { item } = &r.block {
                        input.push(Wire::Value(item));
                    }
                }
                if !text.is_empty() {
                    input.push(message("assistant", Wire::Str(text)));
                }
                for c in tool_calls {
                    input.push(Wire::object([
                        ("type", Wire::Str("function_call")),
                        ("call_id", Wire::Str(&c.id)),
                        ("name", Wire::Str(&c.name)),
                        ("arguments", Wire::String(c.arguments.to_string())),
                    ]));
                }
            }
            Message::ToolResult(r) => {
                let output = if r.images.is_empty() {
                    Wire::Str(&r.content)
                } else {
                    parts(&r.content, &r.images)
                };
                input.push(Wire::object([
                    ("type", Wire::Str("function_call_output")),
                    ("call_id", Wire::Str(&r.call_id)),
                    ("output", output),
                ]))
            }
        }
    }
    let mut body = RequestBody::with_params(params);
    body.set("model", json!(model_id));
    body.set_wire("input", Wire::Array(input));
    body.set("stream", json!(true));
    let fields = body.fields();
    fields.entry("store").or_insert(json!(false));
    if fields["store"] == json!(false) && fields.contains_key("reasoning") {
        let include = fields.entry("include").or_insert_with(|| json!([]));
        if let Some(list) = include.as_array_mut() {
            let encrypted = json!("reasoning.encrypted_content");
            if !list.contains(&encrypted) {
                list.push(encrypted);
            }
        }
    }
    if let Some(system) = &request.system {
        body.set_wire("instructions", Wire::Str(system));
    }
    set_tools(&mut body, &request.tools, |t| {
        Wire::object([
            ("type", Wire::Str("function")),
            ("name", Wire::Str(&t.name)),
            ("description", Wire::Str(&t.description)),
            ("parameters", Wire::Value(&t.parameters)),
        ])
    });
    body
}

/// Parser of Responses stream events.
#[derive(Debug, Default)]
pub struct Parser {
    done: bool,
    saw_tool_call: bool,
    /// Ids of the reasoning items already kept.
    reasoning_ids: std::collections::BTreeSet<String>,
}

impl Parser {
    /// Keep a finished `reasoning` item once (it comes in
    /// `response.output_item.done` and again in the final `output`).
    fn reasoning(&mut self, item: &Value, out: &mut Vec<StreamEvent>) {
        if item["type"] != "reasoning" {
            return;
        }
        let id = item["id"].as_str().unwrap_or_default().to_string();
        if id.is_empty() || self.reasoning_ids.insert(id) {
            out.push(StreamEvent::Reasoning(ReasoningBlock::ResponsesItem {
                item: item.clone(),
            }));
        }
    }
}

fn index(event: &Value) -> usize {
    event["output_index"].as_u64().unwrap_or(0) as usize
}

impl EventParser for Parser {
    fn parse(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let payload = parse_json(event, data)?;
        let kind = payload["type"].as_str().unwrap_or(event);
        let mut out = Vec::new();
        match kind {
            "response.output_text.delta" => {
                if let Some(d) = payload["delta"].as_str() {
                    out.push(StreamEvent::TextDelta(d.into()));
                }
            }
            "response.output_item.added" => {
                let item = &payload["item"];
                if item["type"] == "function_call" {
                    self.saw_tool_call = true;
                    out.push(StreamEvent::ToolCallStart {
                        index: index(&payload),
                        id: item["call_id"].as_str().unwrap_or_default().into(),
                        name: item["name"].as_str().unwrap_or_default().into(),
                    });
                    if let Some(args) = item["arguments"].as_str().filter(|a| !a.is_empty()) {
                        out.push(StreamEvent::ToolCallArgsDelta {
                            index: index(&payload),
                            fragment: args.into(),
                        });
                    }
                }
            }
            "response.output_item.done" => self.reasoning(&payload["item"], &mut out),
            "response.refusal.delta" => {
                if let Some(d) = payload["delta"].as_str() {
                    out.push(StreamEvent::Refusal(d.into()));
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(d) = payload["delta"].as_str() {
                    out.push(StreamEvent::ToolCallArgsDelta {
                        index: index(&payload),
                        fragment: d.into(),
                    });
                }
            }
            "response.completed" | "response.incomplete" => {
                self.done = true;
                let response = &payload["response"];
                for item in response["output"].as_array().into_iter().flatten() {
                    self.reasoning(item, &mut out);
                }
                let usage = &response["usage"];
                out.push(StreamEvent::Usage {
                    input: usage["input_tokens"].as_u64(),
                    output: usage["output_tokens"].as_u64(),
                    cache_read: usage["input_tokens_details"]["cached_tokens"].as_u64(),
                    cache_write: None,
                });
                let reason = if kind == "response.incomplete" {
                    match response["incomplete_details"]["reason"].as_str() {
                        Some("max_output_tokens") => StopReason::MaxTokens,
                        _ => StopReason::Other,
                    }
                } else if self.saw_tool_call {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                };
                out.push(StreamEvent::Stop(reason));
            }
            "response.failed" | "error" => {
                self.done = true;
                let source = if kind == "error" {
                    &payload
                } else {
                    &payload["response"]
                };
                let (code, message) = error_fields(source);
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
