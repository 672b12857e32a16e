//! Lines of a transcript file.

use clawhost_agent_core::{Message, SharedMessage};
use serde::{Deserialize, Serialize};

/// Version of the transcript format.
pub const TRANSCRIPT_VERSION: u32 = 1;

/// The first line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// Always `"session"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Format version.
    pub version: u32,
    /// Session id.
    pub id: String,
    /// Agent id.
    pub agent_id: String,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Working directory of the creating process.
    pub cwd: String,
    /// The session this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// What an entry holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EntryBody {
    /// A user or assistant message without tool calls.
    Message {
        /// The message (shared with the contexts built from it).
        message: SharedMessage,
    },
    /// An assistant message that calls tools.
    ToolCall {
        /// The message (shared with the contexts built from it).
        message: SharedMessage,
    },
    /// A tool result.
    ToolResult {
        /// The message (shared with the contexts built from it).
        message: SharedMessage,
    },
    /// Older context replaced by a summary.
    #[serde(rename_all = "camelCase")]
    Compaction {
        /// The summary.
        summary: String,
        /// First entry kept verbatim after the summary.
        first_kept_entry_id: String,
        /// Estimated context tokens before compaction.
        tokens_before: u64,
    },
    /// The runtime (harness) that owns the session from here on.
    #[serde(rename_all = "camelCase")]
    Runtime {
        /// Runtime id.
        runtime: String,
        /// Selection reason.
        reason: String,
    },
    /// Anything else a host component wants to record.
    #[serde(rename_all = "camelCase")]
    Custom {
        /// Kind of record.
        custom_type: String,
        /// Payload.
        data: serde_json::Value,
    },
}

impl EntryBody {
    /// The entry for a conversation message.
    pub fn from_message(message: Message) -> Self {
        let message = SharedMessage::from(message);
        match &*message {
            Message::ToolResult(_) => EntryBody::ToolResult { message },
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                EntryBody::ToolCall { message }
            }
            _ => EntryBody::Message { message },
        }
    }

    /// The conversation message, if this entry is one.
    pub fn message(&self) -> Option<&Message> {
        self.shared_message().map(|m| &**m)
    }

    /// [`Self::message`], shared.
    pub fn shared_message(&self) -> Option<&SharedMessage> {
        match self {
            EntryBody::Message { message }
            | EntryBody::ToolCall { message }
            | EntryBody::ToolResult { message } => Some(message),
            _ => None,
        }
    }
}

/// One transcript line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Entry id (unique in the session).
    pub id: String,
    /// The entry this one follows (`None` for the first).
    pub parent_id: Option<String>,
    /// Time written, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Content.
    #[serde(flatten)]
    pub body: EntryBody,
}
