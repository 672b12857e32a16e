//! The scripted provider: plays a model offline, deterministically.
//!
//! A script is a list of steps. For each request the provider takes the step
//! numbered by how many assistant replies follow the latest user message, so
//! the same script serves every turn. A step either calls tools (arguments may
//! use `{{user}}`, the latest user text) or answers (the text may use
//! `{{results}}`, the tool results that came after the previous reply).

use async_trait::async_trait;
use clawhost_agent_core::{
    Message, ModelClient, ModelError, ModelErrorKind, ModelRequest, ModelResponse, StopReason,
    ToolCallRequest, Usage,
};
use serde::Deserialize;
use serde_json::Value;

/// A tool call a script makes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptedToolCall {
    /// Tool name.
    pub name: String,
    /// Arguments; string values may contain `{{user}}`.
    #[serde(default)]
    pub arguments: Value,
}

/// One step of a script.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ScriptStep {
    /// Ask for these tool calls (in one reply).
    ToolCalls(Vec<ScriptedToolCall>),
    /// Answer with this text (may contain `{{results}}`).
    Answer(String),
}

/// A model that follows a script.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    steps: Vec<ScriptStep>,
}

fn fill(value: &Value, user: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{{user}}", user)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, user)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, user)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

impl ScriptedModel {
    /// A model following `steps`.
    pub fn new(steps: Vec<ScriptStep>) -> Self {
        Self { steps }
    }

    /// Parse a script from JSON: `[{"toolCalls": [{"name": …, "arguments": …}]}, {"answer": "…"}]`.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        Ok(Self::new(serde_json::from_str(text)?))
    }

    /// The demo script: count the words of the user's text, read two notes
    /// (one of which policy blocks), then report.
    pub fn demo() -> Self {
        Self::new(vec![
            ScriptStep::ToolCalls(vec![
                ScriptedToolCall {
                    name: "word_count".into(),
                    arguments: serde_json::json!({ "text": "{{user}}" }),
                },
                ScriptedToolCall {
                    name: "read_note".into(),
                    arguments: serde_json::json!({ "name": "secrets.md" }),
                },
                ScriptedToolCall {
                    name: "read_note".into(),
                    arguments: serde_json::json!({ "name": "todo.md" }),
                },
            ]),
            ScriptStep::Answer("Here is what the tools said:\n{{results}}".into()),
        ])
    }
}

#[async_trait]
impl ModelClient for ScriptedModel {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let (last_user, user) = request
            .messages
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, m)| match &**m {
                Message::User { text, .. } => Some((i, text)),
                _ => None,
            })
            .ok_or_else(|| {
                ModelError::new(ModelErrorKind::BadRequest, "no user message in the request")
            })?;
        let since = &request.messages[last_user + 1..];
        let step_index = since
            .iter()
            .filter(|m| matches!(***m, Message::Assistant { .. }))
            .count();
        let step = self.steps.get(step_index).ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Other,
                format!(
                    "the script has {} steps and no step {}",
                    self.steps.len(),
                    step_index + 1
                ),
            )
        })?;
        let prompt_text: usize = request
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).map(|s| s.len()).unwrap_or(0))
            .sum();
        let input_tokens = estimate_tokens(&" ".repeat(prompt_text));
        match step {
            ScriptStep::ToolCalls(calls) => Ok(ModelResponse {
                text: String::new(),
                tool_calls: calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| ToolCallRequest {
                        id: format!("call_{}_{}", step_index + 1, i + 1),
                        name: c.name.clone(),
                        arguments: fill(&c.arguments, user),
                    })
                    .collect(),
                stop_reason: StopReason::ToolUse,
                usage: Usage {
                    input_tokens,
                    output_tokens: 8 * calls.len() as u64,
                    ..Usage::default()
                },
                reasoning: Vec::new(),
            }),
            ScriptStep::Answer(template) => {
                let after_last_reply = since
                    .iter()
                    .rposition(|m| matches!(**m, Message::Assistant { .. }))
                    .map_or(0, |i| i + 1);
                let results: Vec<String> = since[after_last_reply..]
                    .iter()
                    .filter_map(|m| match &**m {
                        Message::ToolResult(r) => Some(format!(
                            "- {} {}: {}",
                            r.tool,
                            if r.is_error { "failed" } else { "returned" },
                            r.content
                        )),
                        _ => None,
                    })
                    .collect();
                let text = template.replace("{{results}}", &results.join("\n"));
                if let Some(sink) = &request.text_sink {
                    // Streamed a word at a time, as a provider would.
                    for piece in text.split_inclusive(' ') {
                        sink.send(piece);
                    }
                }
                Ok(ModelResponse {
                    usage: Usage {
                        input_tokens,
                        output_tokens: estimate_tokens(&text),
                        ..Usage::default()
                    },
                    text,
                    tool_calls: Vec::new(),
                    stop_reason: StopReason::EndTurn,
                    reasoning: Vec::new(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clawhost_agent_core::ToolResultMessage;

    use super::*;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model_ref: "scripted/demo".into(),
            system: None,
            messages: messages.into_iter().map(Into::into).collect(),
            tools: vec![],
            text_sink: None,
        }
    }

    #[tokio::test]
    async fn steps_follow_the_conversation_and_fill_placeholders() {
        let m = ScriptedModel::from_json(
            r#"[{"toolCalls":[{"name":"echo","arguments":{"text":"you said {{user}}"}}]},{"answer":"done: {{results}}"}]"#,
        )
        .unwrap();
        let first = m
            .complete(request(vec![Message::user("hi")]))
            .await
            .unwrap();
        assert_eq!(first.tool_calls[0].arguments["text"], "you said hi");
        let call_reply = Message::tool_calls(first.tool_calls.clone());
        let result = Message::ToolResult(ToolResultMessage {
            call_id: "call_1_1".into(),
            tool: "echo".into(),
            content: "X".into(),
            is_error: false,
            images: Vec::new(),
        });
        let second = m
            .complete(request(vec![
                Message::user("hi"),
                call_reply.clone(),
                result.clone(),
            ]))
            .await
            .unwrap();
        assert_eq!(second.text, "done: - echo returned: X");
        // A new user message starts the script over.
        let again = m
            .complete(request(vec![
                Message::user("hi"),
                call_reply,
                result,
                Message::assistant("done"),
                Message::user("yo"),
            ]))
            .await
            .unwrap();
        assert_eq!(again.tool_calls[0].arguments["text"], "you said yo");
    }

    #[tokio::test]
    async fn running_past_the_script_is_an_error() {
        let m = ScriptedModel::new(vec![ScriptStep::Answer("a".into())]);
        let err = m
            .complete(request(vec![Message::user("x"), Message::assistant("a")]))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Other);
    }
}
