//! OpenAI Responses (`POST /responses`, `stream: true`): typed SSE events
//! such as `response.output_text.delta` and `response.completed`.

use clawhost_agent_core::{Message, ModelError, ModelRequest, StopReason};
use serde_json::{json, Map, Value};

use super::{classify, error_fields, insert_tools, merge_params};
use crate::stream::{json as parse_json, EventParser, StreamEvent};

/// The request body.
pub fn body(request: &ModelRequest, model_id: &str, params: &[&Map<String, Value>]) -> Value {
    let mut input = Vec::new();
    for m in &request.messages {
        match m {
            Message::User { text } => input.push(json!({"role": "user", "content": text})),
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    input.push(json!({"role": "assistant", "content": text}));
                }
                for c in tool_calls {
                    input.push(json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments.to_string()}));
                }
            }
            Message::ToolResult(r) => input.push(
                json!({"type": "function_call_output", "call_id": r.call_id, "output": r.content}),
            ),
        }
    }
    let mut body = Map::new();
    merge_params(&mut body, params);
    body.insert("model".into(), json!(model_id));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    body.entry("store").or_insert(json!(false));
    if let Some(system) = &request.system {
        body.insert("instructions".into(), json!(system));
    }
    insert_tools(
        &mut body,
        &request.tools,
        |t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}),
    );
    Value::Object(body)
}

/// Parser of Responses stream events.
#[derive(Debug, Default)]
pub struct Parser {
    done: bool,
    saw_tool_call: bool,
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
