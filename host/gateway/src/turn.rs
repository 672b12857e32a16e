//! A turn started by a request: run on a task of its own on one of the turn
//! threads, so that a client going away cancels it (through the guard the
//! response holds) instead of dropping it mid-write; its events flow to the
//! response as they happen.

use std::sync::Arc;

use clawhost_agent_core::{Approvals, EventSink, RunContext, TurnEvent};
use clawhost_runner::{HostTurnError, TurnReply, TurnRequest};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::DropGuard;

use crate::approvals::ClientApprover;
use crate::{ApiError, Gateway};

/// What a running turn sends its response while it runs.
pub enum Live {
    /// A run event.
    Event(TurnEvent),
    /// An approval request the client is to answer.
    ApprovalRequest(serde_json::Value),
}

/// Who answers a turn's approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// `approvals.nonInteractive`, as for `clawhost run`.
    Policy,
    /// The client, through `POST /v1/approvals/{id}`.
    Client,
}

/// A running turn.
pub struct LiveTurn {
    /// Its events, in order, as they happen.
    events: mpsc::UnboundedReceiver<Live>,
    /// Its result, once it ends.
    pub done: oneshot::Receiver<Result<TurnReply, HostTurnError>>,
    /// Cancels the turn when dropped (the client went away); what it had
    /// done is stored, marked aborted.
    guard: DropGuard,
    /// The run id (unique in the process).
    pub run_id: String,
}

/// Start `request` on the gateway's host, approvals answered as `answers`
/// says; the turn is aborted after `gateway.turnTimeoutSecs`.
/// The client's `slot` is held until the turn ends.
pub fn start(
    gw: &Arc<Gateway>,
    slot: crate::clients::TurnSlot,
    request: TurnRequest,
    answers: Answers,
) -> LiveTurn {
    let host = gw.host.clone();
    let (tx, events) = mpsc::unbounded_channel();
    let mut ctx = RunContext::new(&request.agent, "");
    ctx.approvals = match answers {
        Answers::Policy => Approvals::non_interactive(&host.runner().config().approvals),
        Answers::Client => {
            let tx = tx.clone();
            Approvals(Arc::new(ClientApprover {
                pending: gw.approvals.clone(),
                publish: Box::new(move |request| tx.send(Live::ApprovalRequest(request)).is_ok()),
            }))
        }
    };
    let recorder = Arc::new(gw.metrics.turn(&request.agent));
    let recording = recorder.clone();
    ctx.events = EventSink::with_listener(move |e| {
        recording.event(e);
        let _ = tx.send(Live::Event(e.clone()));
    });
    let cancel = ctx.cancel.clone();
    let run_id = ctx.run_id.clone();
    let timeout = gw.turn_timeout;
    let (send, done) = oneshot::channel();
    gw.turn_threads.spawn(async move {
        let timer = {
            let cancel = ctx.cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(timeout).await;
                cancel.cancel();
            })
        };
        let result = host.run_turn(&request, &ctx).await;
        timer.abort();
        recorder.end(result.is_ok());
        drop(slot);
        let _ = send.send(result);
    });
    LiveTurn {
        events,
        done,
        guard: cancel.drop_guard(),
        run_id,
    }
}

/// What a running turn reports: its events, then how it ended.
// `Done` is large (the turn's session) and comes once per turn; boxing it
// would only cost the streams that match on it.
#[allow(clippy::large_enum_variant)]
pub enum Update {
    /// Something happened.
    Event(TurnEvent),
    /// An approval request waits for the client's answer.
    ApprovalRequest(serde_json::Value),
    /// The turn ended (`Err` also when its task died).
    Done(Result<TurnReply, ApiError>),
}

/// The turn as a stream of updates; the stream owns the guard, so dropping
/// it (the client went away) aborts the turn.
pub fn updates(live: LiveTurn) -> impl futures::Stream<Item = Update> + Send {
    futures::stream::unfold(Some(live), |state| async move {
        let mut live = state?;
        // Held by the stream's state until the turn is over.
        let _ = &live.guard;
        tokio::select! {
            biased;
            Some(live_update) = live.events.recv() => {
                let update = match live_update {
                    Live::Event(e) => Update::Event(e),
                    Live::ApprovalRequest(r) => Update::ApprovalRequest(r),
                };
                Some((update, Some(live)))
            }
            result = &mut live.done => {
                let result = match result {
                    Ok(result) => result.map_err(turn_error),
                    Err(_) => Err(ApiError::internal("the turn's task ended without a result")),
                };
                Some((Update::Done(result), None))
            }
        }
    })
}

/// A failed turn as the client sees it.
pub fn turn_error(e: HostTurnError) -> ApiError {
    match e {
        HostTurnError::UnknownAgent(_) => ApiError::not_found(e.to_string()),
        HostTurnError::Model(_) => ApiError::bad_request(e.to_string()),
        HostTurnError::Session(e) => e.into(),
        HostTurnError::Turn { session_id, error } => {
            ApiError::internal(format!("{error} (stored in session {session_id})"))
        }
    }
}
