//! What a guest is handed that the host holds in another form. Every API
//! version's bindings borrow the host's text (no copy per call); a tool
//! call's arguments and a tool's schema are JSON values on the host, so
//! their text is made here, once, for the borrowed form to point into, and
//! [`borrowed_conversions`] gives every version the same conversions into
//! its borrowed types.

use clawhost_agent_core::{Message, ToolSpec};

use super::json_text;

/// Messages on their way to a guest, with each tool call's arguments as
/// JSON text.
pub(crate) struct Outgoing<'m> {
    messages: Vec<&'m Message>,
    arguments: Vec<Vec<String>>,
}

impl<'m> Outgoing<'m> {
    /// Stage `messages`, in order.
    pub(crate) fn new(messages: impl IntoIterator<Item = &'m Message>) -> Self {
        let messages: Vec<&Message> = messages.into_iter().collect();
        let arguments = messages
            .iter()
            .map(|m| {
                m.requested_calls()
                    .iter()
                    .map(|c| json_text(&c.arguments))
                    .collect()
            })
            .collect();
        Self {
            messages,
            arguments,
        }
    }

    /// Each message with its tool calls' arguments as JSON text, in order.
    pub(crate) fn each(&self) -> impl Iterator<Item = (&'m Message, &[String])> + '_ {
        self.messages
            .iter()
            .copied()
            .zip(self.arguments.iter().map(Vec::as_slice))
    }
}

/// Each tool's parameter schema as JSON text, in order.
pub(crate) fn schema_texts(tools: &[ToolSpec]) -> Vec<String> {
    tools.iter().map(|t| json_text(&t.parameters)).collect()
}

/// The borrowed conversions of one API version whose bindings module is
/// `$wit` (its `ToolRequestParam`, `MessageParam`, `AssistantMessageParam`,
/// `ToolResultMessageParam` and `ToolSpecParam` have the same fields in
/// every version) and whose prepared turn is `$turn`: `requests`,
/// `messages`, `tool_specs` and `prepared`, visible as `$vis`, and their test.
macro_rules! borrowed_conversions {
    ($wit:ident, $turn:ident, $vis:vis) => {
        /// Each staged message's tool requests, pointing into the messages
        /// and the arguments' texts.
        $vis fn requests<'a>(
            staged: &'a $crate::abi::outgoing::Outgoing<'_>,
        ) -> Vec<Vec<$wit::ToolRequestParam<'a>>> {
            staged
                .each()
                .map(|(m, texts)| {
                    m.requested_calls()
                        .iter()
                        .zip(texts)
                        .map(|(c, text)| $wit::ToolRequestParam {
                            id: &c.id,
                            name: &c.name,
                            arguments: text,
                        })
                        .collect()
                })
                .collect()
        }

        /// The staged messages, given their [`requests`]; no text is copied.
        $vis fn messages<'a>(
            staged: &'a $crate::abi::outgoing::Outgoing<'_>,
            requests: &'a [Vec<$wit::ToolRequestParam<'a>>],
        ) -> Vec<$wit::MessageParam<'a>> {
            use clawhost_agent_core::Message;
            staged
                .each()
                .zip(requests)
                .map(|((m, _), calls)| match m {
                    Message::User { text, .. } => $wit::MessageParam::User(text),
                    Message::Assistant { text, .. } => {
                        $wit::MessageParam::Assistant($wit::AssistantMessageParam {
                            text,
                            tool_calls: calls,
                        })
                    }
                    Message::ToolResult(r) => {
                        $wit::MessageParam::ToolResult($wit::ToolResultMessageParam {
                            call_id: &r.call_id,
                            tool: &r.tool,
                            content: &r.content,
                            is_error: r.is_error,
                        })
                    }
                })
                .collect()
        }

        /// Tools on their way to a guest, given their schemas' texts
        /// ([`$crate::abi::outgoing::schema_texts`]).
        $vis fn tool_specs<'a>(
            tools: &'a [clawhost_agent_core::ToolSpec],
            schemas: &'a [String],
        ) -> Vec<$wit::ToolSpecParam<'a>> {
            tools
                .iter()
                .zip(schemas)
                .map(|(t, schema)| $wit::ToolSpecParam {
                    name: &t.name,
                    description: &t.description,
                    parameters: schema,
                })
                .collect()
        }

        /// A prepared turn, given its history and tools already converted.
        $vis fn prepared<'a>(
            t: &'a clawhost_agent_core::PreparedTurn,
            history: &'a [$wit::MessageParam<'a>],
            tools: &'a [$wit::ToolSpecParam<'a>],
        ) -> $turn::PreparedTurn<'a> {
            $turn::PreparedTurn {
                agent_id: &t.agent_id,
                session_id: t.session_id.as_deref(),
                model_ref: &t.model_ref,
                system: t.system.as_deref(),
                history,
                user_text: &t.user_text,
                tools,
                max_iterations: t.max_iterations,
            }
        }

        /// Each message keeps its own calls, with their arguments as JSON text.
        #[cfg(test)]
        mod borrowed_conversions_tests {
            use super::*;

            #[test]
            fn each_message_keeps_its_own_calls_with_their_arguments_as_json() {
                let conversation = $crate::abi::outgoing::sample_conversation();
                let staged = $crate::abi::outgoing::Outgoing::new(&conversation);
                let requests = requests(&staged);
                let sent = messages(&staged, &requests);
                let expected: [&[(&str, &str)]; 5] = [
                    &[],
                    &[("a", r#"{"n":1}"#), ("b", r#"{"n":2}"#)],
                    &[],
                    &[],
                    &[("c", r#"{"n":3}"#)],
                ];
                assert_eq!(sent.len(), expected.len());
                for (m, expected) in sent.iter().zip(expected) {
                    let calls: Vec<(&str, &str)> = match m {
                        $wit::MessageParam::Assistant(a) => {
                            a.tool_calls.iter().map(|c| (c.id, c.arguments)).collect()
                        }
                        _ => Vec::new(),
                    };
                    assert_eq!(calls, expected);
                }
                assert!(matches!(sent[0], $wit::MessageParam::User("go")));
            }
        }
    };
}
pub(crate) use borrowed_conversions;

/// A conversation with calls in several messages, for the versions' tests.
#[cfg(test)]
pub(crate) fn sample_conversation() -> Vec<Message> {
    use clawhost_agent_core::{ToolCallRequest, ToolResultMessage};
    let call = |id: &str, n: u32| ToolCallRequest {
        id: id.into(),
        name: "count".into(),
        arguments: serde_json::json!({ "n": n }),
    };
    vec![
        Message::user("go"),
        Message::tool_calls(vec![call("a", 1), call("b", 2)]),
        Message::ToolResult(ToolResultMessage {
            call_id: "a".into(),
            tool: "count".into(),
            content: "1".into(),
            is_error: false,
            images: Vec::new(),
        }),
        Message::assistant("thinking"),
        Message::tool_calls(vec![call("c", 3)]),
    ]
}
