//! Conversation messages as the host stores and sends them.

use serde::{Deserialize, Serialize};

use crate::{Image, Reasoning};

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
    /// Images the tool returned, after the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// The user's side of a turn: a message's text and attached images.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInput {
    /// Text.
    pub text: String,
    /// Attached images.
    pub images: Vec<Image>,
}

impl UserInput {
    /// The user message of this input, with `text` in place of its own
    /// (what the model is sent after the prompt hooks added context).
    pub fn message_with_text(&self, text: &str) -> Message {
        Message::User {
            text: text.to_string(),
            images: self.images.clone(),
        }
    }

    /// The user message of this input.
    pub fn message(&self) -> Message {
        self.message_with_text(&self.text)
    }
}

impl From<String> for UserInput {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

impl From<&str> for UserInput {
    fn from(text: &str) -> Self {
        Self {
            text: text.to_string(),
            images: Vec::new(),
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A message from the user.
    User {
        /// Text.
        text: String,
        /// Attached images, after the text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// A model reply: text and/or tool calls.
    Assistant {
        /// Text (may be empty when the reply only calls tools).
        text: String,
        /// Tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
        /// The reasoning before the reply, as the provider sent it; sent
        /// back unchanged to the same wire format.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
    },
    /// The result of a tool call.
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            text: text.into(),
            images: Vec::new(),
        }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        }
    }

    /// An assistant message calling tools, with no text.
    pub fn tool_calls(tool_calls: Vec<ToolCallRequest>) -> Self {
        Message::Assistant {
            text: String::new(),
            tool_calls,
            reasoning: Vec::new(),
        }
    }

    /// The tool calls an assistant message asks for; none for other messages.
    pub fn requested_calls(&self) -> &[ToolCallRequest] {
        match self {
            Message::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
}
