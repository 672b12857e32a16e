//! Conversation messages as the host stores and sends them.

use serde::{Deserialize, Serialize};

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The model's id for this call.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as the model produced them.
    pub arguments: serde_json::Value,
}

/// The result of one tool call, as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// Output text (JSON for successful plugin tools).
    pub content: String,
    /// Whether the call failed or was blocked.
    pub is_error: bool,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A message from the user.
    User {
        /// Text.
        text: String,
    },
    /// A model reply: text and/or tool calls.
    Assistant {
        /// Text (may be empty when the reply only calls tools).
        text: String,
        /// Tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
    },
    /// The result of a tool call.
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }
}
