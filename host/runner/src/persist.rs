//! Persisted sessions: a turn on a stored session runs in the session's lane,
//! and is recorded in its transcript (compactions, runtime, messages) and
//! made durable at turn end.

use std::sync::Arc;

use clawhost_agent_core::{
    messages_of_last_turn, Message, RunContext, StopReason, TurnOutcome, UserInput,
};
use clawhost_hooks::{CallContext, MessageWriteEvent, ToolResultPersistEvent};
use clawhost_llm::ModelRuntimeGeneration;
use clawhost_sessions::{EntryBody, SessionError, SessionStore, Transcript};

use crate::{EmbeddedRunner, RunError, Session};

/// Why a persisted turn failed.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The session store failed.
    #[error(transparent)]
    Store(#[from] SessionError),
    /// The turn failed or was aborted. What it did before (the user message,
    /// model replies, tool results, the text of a reply still streaming) and
    /// a `turn_error` or `turn_aborted` entry were recorded.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// The session a transcript describes.
pub fn session_of(t: &Transcript) -> Session {
    let mut s = Session::new(t.id(), t.header().agent_id.clone());
    if let Some((runtime, reason)) = t.runtime_record() {
        s.runtime = Some(runtime);
        s.recorded_reason = Some(reason);
    }
    s.history = t.shared_context();
    s.native_thread = recorded_native_thread(t);
    s
}

/// The custom entry kind recording a native runtime's thread.
const NATIVE_THREAD: &str = "native_thread";

/// The native runtime's thread recorded along the branch (latest wins).
fn recorded_native_thread(t: &Transcript) -> Option<(String, String)> {
    t.branch_back().find_map(|e| match &e.body {
        EntryBody::Custom { custom_type, data } if custom_type == NATIVE_THREAD => Some((
            data["thread"].as_str()?.to_string(),
            data["agent"].as_str().unwrap_or_default().to_string(),
        )),
        _ => None,
    })
}

/// Record the native runtime's thread when the turn changed it (recorded
/// even when the turn failed: the thread holds what it did).
fn record_native_thread(t: &mut Transcript, session: &Session) -> Result<(), SessionError> {
    match &session.native_thread {
        Some(now) if recorded_native_thread(t).as_ref() != Some(now) => {
            t.append(EntryBody::Custom {
                custom_type: NATIVE_THREAD.into(),
                data: serde_json::json!({ "thread": now.0, "agent": now.1 }),
            })?;
            Ok(())
        }
        _ => Ok(()),
    }
}

impl EmbeddedRunner {
    /// Run a turn on a stored session and record it. A failed turn is
    /// recorded too: the messages it got to, then a `turn_error` entry.
    pub async fn run_persisted_turn(
        &self,
        store: &SessionStore,
        agent: &str,
        session_id: &str,
        generation: Arc<ModelRuntimeGeneration>,
        ctx: &RunContext,
        user: impl Into<UserInput>,
    ) -> Result<(TurnOutcome, Session), PersistError> {
        let user = user.into();
        let _lane = self.lanes().enter(session_id).await?;
        let mut transcript = store.checkout(agent, session_id)?;
        let result = self
            .record_turn(store, agent, &mut transcript, generation, ctx, &user)
            .await;
        store.checkin(agent, transcript);
        result
    }

    /// [`Self::run_persisted_turn`] on a transcript taken for it.
    async fn record_turn(
        &self,
        store: &SessionStore,
        agent: &str,
        transcript: &mut Transcript,
        generation: Arc<ModelRuntimeGeneration>,
        ctx: &RunContext,
        user: &UserInput,
    ) -> Result<(TurnOutcome, Session), PersistError> {
        let session_id = transcript.id().to_string();
        let mut session = session_of(transcript);
        let mut ctx = ctx.clone();
        ctx.session_id = Some(session_id.clone());
        let seen = ctx.events.snapshot().len();
        let outcome = match self
            .run_session_turn(&mut session, generation, &ctx, user.clone())
            .await
        {
            Ok(outcome) => outcome,
            Err(error) => {
                let events = ctx.events.snapshot();
                let mut done = messages_of_last_turn(&events[seen.min(events.len())..]);
                if done.is_empty() {
                    done.push(user.message());
                }
                for message in done {
                    if let Some(message) = self.stored_form(&ctx, &session, message).await {
                        transcript.append_message(message)?;
                    }
                }
                record_native_thread(transcript, &session)?;
                transcript.append(match error {
                    RunError::Aborted => EntryBody::Custom {
                        custom_type: "turn_aborted".into(),
                        data: serde_json::Value::Null,
                    },
                    _ => EntryBody::Custom {
                        custom_type: "turn_error".into(),
                        data: serde_json::json!({ "error": error.to_string() }),
                    },
                })?;
                store.commit(agent, transcript)?;
                return Err(error.into());
            }
        };
        // The entry ids of the messages the turn started from (nothing was
        // appended yet), needed only to record a compaction.
        let message_ids = if session.compactions.is_empty() {
            Vec::new()
        } else {
            transcript.message_entry_ids()
        };
        for c in &session.compactions {
            let first_kept = message_ids[message_ids.len() - c.kept].clone();
            transcript.append(EntryBody::Compaction {
                summary: c.summary.clone(),
                first_kept_entry_id: first_kept,
                tokens_before: c.tokens_before,
            })?;
        }
        if let Some(selection) = &session.selection {
            store.record_runtime(transcript, &selection.runtime, selection.reason.as_str())?;
        }
        record_native_thread(transcript, &session)?;
        for message in &outcome.new_messages {
            if let Some(message) = self.stored_form(&ctx, &session, message.clone()).await {
                transcript.append_message(message)?;
            }
        }
        // An answer cut off, refused or stopped by the provider says so.
        if !matches!(
            outcome.stop_reason,
            StopReason::EndTurn | StopReason::ToolUse
        ) {
            transcript.append(EntryBody::Custom {
                custom_type: "turn_stopped".into(),
                data: serde_json::json!({ "reason": outcome.stop_reason }),
            })?;
        }
        store.commit(agent, transcript)?;
        Ok((outcome, session))
    }

    /// A message as the transcript stores it: a tool result's text after
    /// `tool_result_persist`, then any message after `before_message_write`
    /// (`None`: kept out). The decisions are reported as run events.
    async fn stored_form(
        &self,
        ctx: &RunContext,
        session: &Session,
        mut message: Message,
    ) -> Option<Message> {
        if let Message::ToolResult(result) = &mut message {
            let run = self
                .hooks()
                .tool_result_persist(ToolResultPersistEvent {
                    tool: result.tool.clone(),
                    call_id: result.call_id.clone(),
                    content: std::mem::take(&mut result.content),
                    is_error: result.is_error,
                    context: CallContext {
                        agent_id: ctx.agent_id.clone(),
                        session_id: Some(session.id.clone()),
                        model_ref: ctx.model_ref.clone(),
                    },
                })
                .await;
            clawhost_tools::report_hook_decisions(ctx, &result.call_id, run.decisions);
            result.content = run.stored.unwrap_or_default();
        }
        let run = self
            .hooks()
            .before_message_write(MessageWriteEvent {
                session_id: session.id.clone(),
                agent_id: session.agent_id.clone(),
                message,
            })
            .await;
        clawhost_tools::report_hook_decisions(ctx, "", run.decisions);
        run.stored
    }

    /// `/reset` on a stored session: the harness forgets it, and a `reset`
    /// marker starts an empty context (the earlier entries stay on disk).
    pub async fn reset_persisted(
        &self,
        store: &SessionStore,
        agent: &str,
        session_id: &str,
    ) -> Result<(), PersistError> {
        let _lane = self.lanes().enter(session_id).await?;
        let mut transcript = store.checkout(agent, session_id)?;
        let mut session = session_of(&transcript);
        self.reset_session(&mut session).await;
        let result = transcript
            .append(EntryBody::Custom {
                custom_type: "reset".into(),
                data: serde_json::Value::Null,
            })
            .and_then(|_| store.commit(agent, &mut transcript));
        store.checkin(agent, transcript);
        Ok(result?)
    }
}
