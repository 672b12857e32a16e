//! What a run reports while it goes: for transcripts, status and the CLI.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::{Image, Reasoning, ToolCallRequest, Usage};

/// One thing that happened during a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TurnEvent {
    /// The user's message entered the turn.
    UserMessage {
        /// Text.
        text: String,
        /// Attached images (serialized as their number).
        #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "count")]
        images: Vec<Image>,
    },
    /// The model replied.
    ModelReply {
        /// Iteration number (1-based).
        iteration: u32,
        /// Text of the reply.
        text: String,
        /// Tool calls it asked for.
        tool_calls: Vec<ToolCallRequest>,
        /// Token usage.
        usage: Usage,
        /// The reasoning before the reply, as the provider sent it.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
    },
    /// A hook decided something about a tool call.
    HookDecision {
        /// The hook (serialized as its name, `before_tool_call`).
        hook: clawhost_config::HookKind,
        /// Plugin that decided.
        plugin: String,
        /// Tool call id.
        call_id: String,
        /// What it decided, in words (`allow`, `block: …`, `rewrite: …`, `replace`, `failed: …`).
        decision: String,
    },
    /// An approval request of a `before_tool_call` hook was answered.
    Approval {
        /// Plugin that asked.
        plugin: String,
        /// Tool call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// What it asked.
        title: String,
        /// The answer (`allow-once`, `allow-always`, `deny`, `timeout`,
        /// `cancelled`; `allow-always (remembered)` when an earlier answer stood).
        decision: String,
    },
    /// A tool call finished (or was refused).
    ToolResult {
        /// Tool call id.
        call_id: String,
        /// Tool name.
        tool: String,
        /// Output the model sees.
        content: String,
        /// Whether it is an error.
        is_error: bool,
        /// Images the tool returned.
        #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "count")]
        images: Vec<Image>,
    },
    /// Older context was replaced by a summary.
    Compaction {
        /// Estimated tokens before.
        tokens_before: u64,
        /// Messages summarized.
        compacted: usize,
        /// Messages kept verbatim.
        kept: usize,
        /// Why (`threshold` or `overflow`).
        trigger: String,
    },
    /// A native runtime (Codex) compacts its own context; its summary stays
    /// in its thread, the host's mirror keeps every message.
    NativeCompaction {
        /// Where the compaction is.
        phase: crate::NativeCompaction,
    },
    /// A piece of the model's reply text, as it streams (before its
    /// `ModelReply`).
    TextDelta {
        /// Iteration number (1-based) of the model call streaming.
        iteration: u32,
        /// The piece of text.
        text: String,
    },
    /// A native runtime (Codex, an ACP agent) reported the thread it keeps
    /// this session in; a resumed session continues it.
    NativeThread {
        /// The runtime's thread (session) id.
        thread: String,
        /// The runtime's name and version, as it reported them.
        agent: String,
    },
    /// The turn ended with this answer.
    FinalAnswer {
        /// Text.
        text: String,
        /// Why the model's last reply stopped (a cut-off or a refusal is
        /// shown as such).
        stop_reason: crate::StopReason,
    },
}

/// Images in an event are shown as their number: a client watching a run
/// needs to know they are there, not their megabytes again.
fn count<S: serde::Serializer>(images: &[Image], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(images.len() as u64)
}

type Listener = Arc<dyn Fn(&TurnEvent) + Send + Sync>;

/// Collects a run's events in order, and forwards each to an optional listener.
#[derive(Clone, Default)]
pub struct EventSink {
    events: Arc<Mutex<Vec<TurnEvent>>>,
    listener: Option<Listener>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("events", &self.snapshot().len())
            .finish()
    }
}

impl EventSink {
    /// A sink that also calls `listener` for every event as it happens.
    pub fn with_listener(listener: impl Fn(&TurnEvent) + Send + Sync + 'static) -> Self {
        Self {
            events: Arc::default(),
            listener: Some(Arc::new(listener)),
        }
    }

    /// Record an event.
    pub fn emit(&self, event: TurnEvent) {
        if let Some(listener) = &self.listener {
            listener(&event);
        }
        crate::lock(&self.events).push(event);
    }

    /// A text sink for the model call of `iteration`: each piece becomes a
    /// [`TurnEvent::TextDelta`], then goes on to `inner` (a harness's own sink).
    pub fn text_sink(&self, iteration: u32, inner: Option<crate::TextSink>) -> crate::TextSink {
        let sink = self.clone();
        crate::TextSink::new(move |text| {
            sink.emit(TurnEvent::TextDelta {
                iteration,
                text: text.to_string(),
            });
            if let Some(inner) = &inner {
                inner.send(text);
            }
        })
    }

    /// All events so far, in order.
    pub fn snapshot(&self) -> Vec<TurnEvent> {
        crate::lock(&self.events).clone()
    }

    /// The last event `f` picks something from, without copying the others.
    pub fn find_last<T>(&self, f: impl FnMut(&TurnEvent) -> Option<T>) -> Option<T> {
        crate::lock(&self.events).iter().rev().find_map(f)
    }
}

/// The messages a turn's events describe, from its first `UserMessage` on:
/// what a failed or aborted turn had done before it ended, so it can still be
/// recorded. A `UserMessage` right after another (nothing happened in
/// between: an attempt retried after compaction) replaces it; a later one
/// (a `before_agent_finalize` pass) follows what came before. Text of a
/// reply that was still streaming becomes a last assistant message of the
/// text received.
pub fn messages_of_last_turn(events: &[TurnEvent]) -> Vec<crate::Message> {
    use crate::{Message, ToolResultMessage};
    let start = events
        .iter()
        .position(|e| matches!(e, TurnEvent::UserMessage { .. }))
        .unwrap_or(events.len());
    let mut messages: Vec<Message> = Vec::new();
    for e in &events[start..] {
        let message = match e {
            TurnEvent::UserMessage { text, images } => {
                if matches!(messages.as_slice(), [Message::User { .. }]) {
                    messages.clear();
                }
                Message::User {
                    text: text.clone(),
                    images: images.clone(),
                }
            }
            TurnEvent::ModelReply {
                text,
                tool_calls,
                reasoning,
                ..
            } => Message::Assistant {
                text: text.clone(),
                tool_calls: tool_calls.clone(),
                reasoning: reasoning.clone(),
            },
            TurnEvent::ToolResult {
                call_id,
                tool,
                content,
                is_error,
                images,
            } => Message::ToolResult(ToolResultMessage {
                call_id: call_id.clone(),
                tool: tool.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: images.clone(),
            }),
            _ => continue,
        };
        messages.push(message);
    }
    let last_reply = events[start..]
        .iter()
        .rposition(|e| matches!(e, TurnEvent::ModelReply { .. }))
        .map_or(start, |i| start + i + 1);
    let partial: String = events[last_reply..]
        .iter()
        .filter_map(|e| match e {
            TurnEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if !partial.is_empty() {
        messages.push(Message::assistant(partial));
    }
    messages
}
