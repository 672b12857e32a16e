//! The provider-neutral stream of model events, and its assembly into a reply.

use std::collections::BTreeMap;

use clawhost_agent_core::{
    ModelError, ModelErrorKind, ModelResponse, Reasoning, ReasoningBlock, StopReason,
    ToolCallRequest, Usage,
};

/// One event of a model's streamed reply, whatever the provider.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More reply text.
    TextDelta(String),
    /// A tool call begins (`index` orders calls within the reply).
    ToolCallStart {
        /// Position of the call in the reply.
        index: usize,
        /// The provider's call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More of a tool call's JSON arguments.
    ToolCallArgsDelta {
        /// Position of the call in the reply.
        index: usize,
        /// A fragment of JSON text.
        fragment: String,
    },
    /// Token counts (any may be absent; later values overwrite earlier).
    Usage {
        /// Prompt tokens.
        input: Option<u64>,
        /// Completion tokens.
        output: Option<u64>,
        /// Prompt tokens read from the provider's cache.
        cache_read: Option<u64>,
        /// Prompt tokens written to the provider's cache.
        cache_write: Option<u64>,
    },
    /// Why the model stopped.
    Stop(StopReason),
    /// More refusal text (OpenAI's `refusal` deltas): the model declines.
    Refusal(String),
    /// A complete piece of reasoning, to keep and send back unchanged.
    Reasoning(ReasoningBlock),
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    args: String,
}

/// Builds a [`ModelResponse`] from stream events.
#[derive(Debug, Default)]
pub struct Assembler {
    text: String,
    calls: BTreeMap<usize, PartialCall>,
    usage: Usage,
    stop: Option<StopReason>,
    refusal: String,
    reasoning: Vec<ReasoningBlock>,
}

impl Assembler {
    /// Apply one event.
    pub fn push(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta(t) => self.text.push_str(&t),
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = self.calls.entry(index).or_default();
                if !id.is_empty() {
                    call.id = id;
                }
                if !name.is_empty() {
                    call.name = name;
                }
            }
            StreamEvent::ToolCallArgsDelta { index, fragment } => self
                .calls
                .entry(index)
                .or_default()
                .args
                .push_str(&fragment),
            StreamEvent::Usage {
                input,
                output,
                cache_read,
                cache_write,
            } => {
                if let Some(i) = input {
                    self.usage.input_tokens = i;
                }
                if let Some(r) = cache_read {
                    self.usage.cache_read_tokens = r;
                }
                if let Some(w) = cache_write {
                    self.usage.cache_write_tokens = w;
                }
                if let Some(o) = output {
                    self.usage.output_tokens = o;
                }
            }
            StreamEvent::Stop(reason) => self.stop = Some(reason),
            StreamEvent::Refusal(t) => self.refusal.push_str(&t),
            StreamEvent::Reasoning(r) => self.reasoning.push(r),
        }
    }

    /// Whether a stop reason arrived.
    pub fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// The complete reply; tool-call arguments must be valid JSON objects.
    /// Its reasoning has no `model_ref` yet: the caller, which knows the
    /// model, marks it.
    pub fn finish(self) -> Result<ModelResponse, ModelError> {
        let stop_reason = self.stop.ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Protocol,
                "the stream ended before the model finished its reply",
            )
        })?;
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(ModelError::new(
                    ModelErrorKind::Protocol,
                    format!("tool call #{index} has no name"),
                ));
            }
            let arguments = if call.args.trim().is_empty() {
                serde_json::json!({})
            } else {
                serde_json::from_str(&call.args).map_err(|e| {
                    let why = if stop_reason == StopReason::MaxTokens {
                        "the reply was cut off at the output token limit inside them (raise the model's maxTokens)".to_string()
                    } else {
                        e.to_string()
                    };
                    ModelError::new(
                        ModelErrorKind::Protocol,
                        format!(
                            "arguments of tool call `{}` are not valid JSON ({why}): {}",
                            call.name,
                            clawhost_agent_core::text::clip(&call.args, 200)
                        ),
                    )
                })?
            };
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            tool_calls.push(ToolCallRequest {
                id,
                name: call.name,
                arguments,
            });
        }
        let stop_reason = if !self.refusal.is_empty() {
            StopReason::Refusal
        } else if !tool_calls.is_empty() && stop_reason == StopReason::EndTurn {
            StopReason::ToolUse
        } else {
            stop_reason
        };
        // A refusal is the reply's text (after any text before it).
        let text = match (self.text.is_empty(), self.refusal.is_empty()) {
            (_, true) => self.text,
            (true, false) => self.refusal,
            (false, false) => format!("{}\n{}", self.text, self.refusal),
        };
        Ok(ModelResponse {
            text,
            tool_calls,
            stop_reason,
            usage: self.usage,
            reasoning: self
                .reasoning
                .into_iter()
                .map(|block| Reasoning::new(String::new(), block))
                .collect(),
        })
    }
}

/// Turns one provider's SSE events into [`StreamEvent`]s.
pub trait EventParser: Send {
    /// Parse one SSE event (its `event:` name, possibly empty, and `data:`).
    fn parse(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError>;
    /// Whether the provider signalled the end of the stream.
    fn done(&self) -> bool;
}

/// Parse a JSON payload, or fail with a protocol error naming the event.
pub(crate) fn json(event: &str, data: &str) -> Result<serde_json::Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        let shown = clawhost_agent_core::text::clip(data, 200);
        ModelError::new(
            ModelErrorKind::Protocol,
            format!(
                "malformed {} event ({e}): {shown}",
                if event.is_empty() { "SSE" } else { event }
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_arguments_are_joined_and_parsed() {
        let mut a = Assembler::default();
        a.push(StreamEvent::ToolCallStart {
            index: 1,
            id: "b".into(),
            name: "two".into(),
        });
        a.push(StreamEvent::ToolCallStart {
            index: 0,
            id: "a".into(),
            name: "one".into(),
        });
        for f in ["{\"q\":", " \"x", "y\"}"] {
            a.push(StreamEvent::ToolCallArgsDelta {
                index: 0,
                fragment: f.into(),
            });
        }
        a.push(StreamEvent::Stop(StopReason::EndTurn));
        let r = a.finish().unwrap();
        assert_eq!(r.tool_calls[0].arguments, serde_json::json!({"q": "xy"}));
        assert_eq!(r.tool_calls[1].arguments, serde_json::json!({}));
        assert_eq!(r.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn broken_arguments_and_missing_stop_are_protocol_errors() {
        let mut a = Assembler::default();
        a.push(StreamEvent::ToolCallStart {
            index: 0,
            id: "a".into(),
            name: "one".into(),
        });
        // 200 KB of broken arguments: the error quotes 200 characters.
        let huge = format!("{{\"q\": \"{}", "x".repeat(200_000));
        a.push(StreamEvent::ToolCallArgsDelta {
            index: 0,
            fragment: huge,
        });
        a.push(StreamEvent::Stop(StopReason::ToolUse));
        let err = a.finish().unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Protocol);
        assert!(err.message.len() < 500, "{}", err.message.len());
        assert!(err.message.contains("more bytes]"), "{}", err.message);
        assert_eq!(
            Assembler::default().finish().unwrap_err().kind,
            ModelErrorKind::Protocol
        );
    }
}
