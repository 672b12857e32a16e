//! Compaction of a session's history: when the context nears the model's
//! window, or after a context-overflow error, older messages are summarized by
//! a model call through the host transport; recent ones are kept verbatim and
//! a tool call is never separated from its results.

use std::sync::Arc;

use clawhost_agent_core::{
    estimate_tokens, plan_cut, CompactionObserver, Message, ModelClient, ModelError,
    ModelErrorKind, ModelRequest, NativeCompaction, RunContext, SharedMessage, TurnEvent,
};
use clawhost_hooks::{AfterCompactionEvent, BeforeCompactionEvent, HookEvent, HookRunner};

/// What a compaction did, for the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionRecord {
    /// The summary that replaced the older messages.
    pub summary: String,
    /// Messages summarized.
    pub compacted: usize,
    /// Messages kept verbatim (a suffix of the history before compaction).
    pub kept: usize,
    /// Estimated tokens before.
    pub tokens_before: u64,
}

const SUMMARY_PROMPT: &str = "Summarize the conversation below for your own later use: the user's goals, decisions made, facts learned from tools, and open questions. Be concise and concrete.";

fn render(messages: &[SharedMessage]) -> String {
    messages
        .iter()
        .map(|m| match &**m {
            Message::User { text, images } => {
                format!("USER: {text}{}", clawhost_agent_core::images_note(images))
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let calls: Vec<String> = tool_calls
                    .iter()
                    .map(|c| format!("{}({})", c.name, c.arguments))
                    .collect();
                format!(
                    "ASSISTANT: {text}{}",
                    if calls.is_empty() {
                        String::new()
                    } else {
                        format!(" [calls {}]", calls.join(", "))
                    }
                )
            }
            Message::ToolResult(r) => format!(
                "TOOL {} {}: {}{}",
                r.tool,
                if r.is_error { "error" } else { "result" },
                r.content,
                clawhost_agent_core::images_note(&r.images)
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The hooks compaction reports to.
pub struct CompactionHooks<'a> {
    /// The hook runner.
    pub runner: &'a HookRunner,
    /// The session being compacted.
    pub session_id: Option<String>,
}

/// Compact `history` in place, keeping about `keep_recent_tokens`:
/// `before_compaction` observes what is about to be summarized; a granted
/// compaction provider may supply the summary, else a model call writes it;
/// `after_compaction` observes the result. Returns `Ok(None)` when there is
/// nothing to summarize (`after_compaction` then fires with a count of 0).
pub async fn compact(
    history: &mut Vec<SharedMessage>,
    model: &dyn ModelClient,
    ctx: &RunContext,
    keep_recent_tokens: u64,
    trigger: &str,
    hooks: &CompactionHooks<'_>,
) -> Result<Option<CompactionRecord>, ModelError> {
    let Some(cut) = plan_cut(history, keep_recent_tokens) else {
        // Nothing to summarize: as OpenClaw, `after_compaction` still
        // reports the attempt, with nothing compacted.
        hooks
            .runner
            .observe(HookEvent::AfterCompaction(&AfterCompactionEvent {
                session_id: hooks.session_id.clone(),
                message_count: history.len() as u32,
                token_count: estimate_tokens(history),
                compacted_count: 0,
            }))
            .await;
        return Ok(None);
    };
    let tokens_before = estimate_tokens(history);
    let transcript = render(&history[..cut]);
    let event = BeforeCompactionEvent {
        session_id: hooks.session_id.clone(),
        message_count: history.len() as u32,
        token_count: tokens_before,
        compacted_count: cut as u32,
        transcript: transcript.clone(),
    };
    let observed = hooks
        .runner
        .observe(HookEvent::BeforeCompaction(&event))
        .await;
    clawhost_tools::report_hook_decisions(ctx, "", observed.decisions);
    let hooked = hooks.runner.compaction_summary(event).await;
    clawhost_tools::report_hook_decisions(ctx, "", hooked.decisions);
    if let Some(reason) = hooked.blocked {
        return Err(ModelError::hook_blocked(reason));
    }
    let summary = match hooked.summary {
        Some((_plugin, summary)) => summary,
        None => {
            let reply = model
                .complete(ModelRequest {
                    model_ref: ctx.model_ref.clone(),
                    system: Some(SUMMARY_PROMPT.into()),
                    messages: vec![SharedMessage::from(Message::user(transcript))],
                    tools: Vec::new(),
                    text_sink: None,
                })
                .await?;
            if reply.text.trim().is_empty() {
                return Err(ModelError::new(
                    ModelErrorKind::Protocol,
                    "the model returned an empty compaction summary",
                ));
            }
            reply.text
        }
    };
    let kept = history.len() - cut;
    let message_count = history.len() as u32;
    let mut compacted = vec![SharedMessage::from(Message::user(format!(
        "[Summary of the earlier conversation]\n{summary}"
    )))];
    compacted.extend(history.drain(cut..));
    *history = compacted;
    ctx.events.emit(TurnEvent::Compaction {
        tokens_before,
        compacted: cut,
        kept,
        trigger: trigger.into(),
    });
    hooks
        .runner
        .observe(HookEvent::AfterCompaction(&AfterCompactionEvent {
            session_id: hooks.session_id.clone(),
            message_count,
            token_count: tokens_before,
            compacted_count: cut as u32,
        }))
        .await;
    Ok(Some(CompactionRecord {
        summary,
        compacted: cut,
        kept,
        tokens_before,
    }))
}

/// The compaction hooks of a native runtime's own compaction (Codex
/// compacting its thread): observe-only, with the mirror's counts; nothing
/// of the runtime's is summarized here (`compacted_count` 0, no transcript)
/// and the mirror keeps every message.
pub(crate) struct NativeCompactionHooks {
    pub hooks: Arc<HookRunner>,
    pub ctx: RunContext,
    /// The session's history before the turn.
    pub history: Vec<SharedMessage>,
}

#[async_trait::async_trait]
impl CompactionObserver for NativeCompactionHooks {
    async fn native_compaction(&self, phase: NativeCompaction, turn: &[Message]) {
        let turn: Vec<SharedMessage> = turn.iter().cloned().map(SharedMessage::from).collect();
        let message_count = (self.history.len() + turn.len()) as u32;
        let token_count = estimate_tokens(&self.history) + estimate_tokens(&turn);
        let session_id = self.ctx.session_id.clone();
        let observed = match phase {
            NativeCompaction::Started => {
                self.hooks
                    .observe(HookEvent::BeforeCompaction(&BeforeCompactionEvent {
                        session_id,
                        message_count,
                        token_count,
                        compacted_count: 0,
                        transcript: String::new(),
                    }))
                    .await
            }
            NativeCompaction::Completed => {
                self.hooks
                    .observe(HookEvent::AfterCompaction(&AfterCompactionEvent {
                        session_id,
                        message_count,
                        token_count,
                        compacted_count: 0,
                    }))
                    .await
            }
        };
        clawhost_tools::report_hook_decisions(&self.ctx, "", observed.decisions);
    }
}
