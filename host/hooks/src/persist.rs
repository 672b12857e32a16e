//! The hooks on what is stored in the transcript: `tool_result_persist` and
//! `before_message_write`. They change only what is written; the model saw
//! (or will see) the message as it was.

use clawhost_agent_core::Message;

use crate::catalog::*;
use crate::runner::{HookDecisionRecord, HookError, HookRunner};

/// What the persist hooks made of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct PersistRun<T> {
    /// What to store (`None`: keep it out of the transcript).
    pub stored: Option<T>,
    /// What each handler decided, in order.
    pub decisions: Vec<HookDecisionRecord>,
}

/// Whether `replacement` may stand in for `message` in the transcript: the
/// same kind of message, answering or asking the same tool calls (a replaced
/// message must not break the pairing of calls and results).
fn same_shape(message: &Message, replacement: &Message) -> Result<(), HookError> {
    let ids = |m: &Message| -> Vec<String> {
        match m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            Message::ToolResult(r) => vec![r.call_id.clone()],
            Message::User { .. } => Vec::new(),
        }
    };
    if std::mem::discriminant(message) != std::mem::discriminant(replacement) {
        return Err(HookError::Failed(
            "the replacement is a different kind of message".into(),
        ));
    }
    if ids(message) != ids(replacement) {
        return Err(HookError::Failed(
            "the replacement changes the tool call ids".into(),
        ));
    }
    Ok(())
}

impl HookRunner {
    /// Run `tool_result_persist`: handlers by descending priority, each seeing
    /// the text the one before left, may replace the text stored for a tool
    /// result. A failing handler withholds the text from the transcript
    /// (it may have been a redaction) unless its fail policy is `ignore`.
    pub async fn tool_result_persist(&self, event: ToolResultPersistEvent) -> PersistRun<String> {
        let kind = HookKind::ToolResultPersist;
        let mut decisions = Vec::new();
        let mut event = event;
        let regs: Vec<_> = self
            .handlers(kind)
            .filter(|r| r.receives(&event.tool))
            .collect();
        for reg in regs {
            let answer = reg
                .handler
                .handle(HookEvent::ToolResultPersist(&event))
                .await;
            let error = match answer {
                Ok(HookOutcome::ToolResultPersist(None)) => {
                    decisions.push(Self::record(kind, &reg.plugin_id, "keep".into()));
                    continue;
                }
                Ok(HookOutcome::ToolResultPersist(Some(text))) => {
                    let decision = format!("replace ({} bytes stored)", text.len());
                    decisions.push(Self::record(kind, &reg.plugin_id, decision));
                    event.content = text;
                    continue;
                }
                other => HookError::unusable(kind, other),
            };
            if let Some(reason) = reg.failure(&error, &mut decisions) {
                event.content = format!("[withheld from the transcript: {reason}]");
                break;
            }
        }
        PersistRun {
            stored: Some(event.content),
            decisions,
        }
    }

    /// Run `before_message_write`: handlers by descending priority, each
    /// seeing the message the one before left, may replace it (with a message
    /// of the same kind and tool call ids) or keep it out of the transcript
    /// (terminal). A failing handler is skipped unless its fail policy is
    /// `block`, which keeps the message out.
    pub async fn before_message_write(&self, event: MessageWriteEvent) -> PersistRun<Message> {
        let kind = HookKind::BeforeMessageWrite;
        let mut decisions = Vec::new();
        let mut event = event;
        for reg in self.handlers(kind) {
            let answer = reg
                .handler
                .handle(HookEvent::BeforeMessageWrite(&event))
                .await;
            let error = match answer {
                Ok(HookOutcome::BeforeMessageWrite(MessageWriteOutcome::Keep)) => {
                    decisions.push(Self::record(kind, &reg.plugin_id, "keep".into()));
                    continue;
                }
                Ok(HookOutcome::BeforeMessageWrite(MessageWriteOutcome::Replace(message))) => {
                    match same_shape(&event.message, &message) {
                        Ok(()) => {
                            decisions.push(Self::record(kind, &reg.plugin_id, "replace".into()));
                            event.message = message;
                            continue;
                        }
                        Err(error) => error,
                    }
                }
                Ok(HookOutcome::BeforeMessageWrite(MessageWriteOutcome::Block(reason))) => {
                    let decision = format!("block: {reason}");
                    decisions.push(Self::record(kind, &reg.plugin_id, decision));
                    return PersistRun {
                        stored: None,
                        decisions,
                    };
                }
                other => HookError::unusable(kind, other),
            };
            if reg.failure(&error, &mut decisions).is_some() {
                return PersistRun {
                    stored: None,
                    decisions,
                };
            }
        }
        PersistRun {
            stored: Some(event.message),
            decisions,
        }
    }
}
