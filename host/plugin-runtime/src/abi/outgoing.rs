//! What a guest is handed that the host holds in another form. Every API
//! version's bindings borrow the host's text (no copy per call); a tool
//! call's arguments and a tool's schema are JSON values on the host, so
//! their text is made here, once, for the borrowed form to point into.

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

/// A test, for a version whose bindings are `$wit` and whose conversions
/// are `requests` and `messages` in scope: each message keeps its own calls,
/// with their arguments as JSON text.
#[cfg(test)]
macro_rules! test_outgoing_messages {
    ($wit:ident) => {
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
    };
}
#[cfg(test)]
pub(crate) use test_outgoing_messages;

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
