//! Approvals answered by the gateway's client: a run that asks for them
//! (`"approvals": "client"`) streams an `approval_request` event with an id,
//! and the client answers with `POST /v1/approvals/{id}`. The host's timeout
//! applies around the wait, as for an operator at a terminal. On a session
//! store shared by several replicas the request is also offered through the
//! store, so the answer may come through any replica.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::extract::{Path, State};
use axum::Json;
use clawhost_agent_core::{ApprovalDecision, Approver, PendingApproval};
use clawhost_sessions::ApprovalRelay;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::{ApiError, Gateway};

/// Requests waiting for a client's answer, by id, and the store's relay
/// when replicas share one.
#[derive(Default)]
pub struct Pending {
    waiting: Mutex<HashMap<String, Waiting>>,
    relay: Option<Arc<dyn ApprovalRelay>>,
}

/// A request waiting on this replica.
struct Waiting {
    answer: oneshot::Sender<ApprovalDecision>,
    /// Recorded in the shared store, which then decides the first answer.
    offered: bool,
}

/// An answer's decision from its name.
fn decision(name: &str) -> Option<ApprovalDecision> {
    match name {
        "allow-once" => Some(ApprovalDecision::AllowOnce),
        "allow-always" => Some(ApprovalDecision::AllowAlways),
        "deny" => Some(ApprovalDecision::Deny),
        _ => None,
    }
}

impl Pending {
    /// Requests answered here, and through `relay` when given.
    pub fn new(relay: Option<Arc<dyn ApprovalRelay>>) -> Self {
        Self {
            waiting: Mutex::default(),
            relay,
        }
    }

    fn open(&self) -> (String, oneshot::Receiver<ApprovalDecision>) {
        // Unguessable and unique across replicas.
        let id = format!("appr-{:016x}", fastrand::u64(..));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(
            id.clone(),
            Waiting {
                answer: tx,
                offered: false,
            },
        );
        (id, rx)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        clawhost_agent_core::lock(&self.waiting)
    }
}

/// Removes a request nobody answered (the host's timeout, the run ended).
struct Forget<'a>(&'a Pending, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
        if let Some(relay) = &self.0.relay {
            relay.withdraw(&self.1);
        }
    }
}

/// Asks the client of one run: `publish` sends the request down the run's
/// stream (false: the stream is gone).
pub struct ClientApprover {
    pub(crate) pending: Arc<Pending>,
    pub(crate) publish: Box<dyn Fn(Value) -> bool + Send + Sync>,
}

#[async_trait]
impl Approver for ClientApprover {
    async fn decide(&self, p: &PendingApproval) -> ApprovalDecision {
        let pending = &*self.pending;
        let (id, answer) = pending.open();
        let _forget = Forget(pending, id.clone());
        if let Some(relay) = &pending.relay {
            match relay.offer(&id).await {
                Ok(()) => {
                    if let Some(w) = pending.lock().get_mut(&id) {
                        w.offered = true;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the approval request is answerable on this replica only")
                }
            }
        }
        let request = json!({
            "id": id,
            "plugin": p.plugin_id,
            "tool": p.tool,
            "call_id": p.call_id,
            "params": p.params,
            "title": p.request.title,
            "description": p.request.description,
            "severity": p.request.severity.as_str(),
            "timeout_ms": p.timeout.as_millis() as u64,
        });
        if !(self.publish)(request) {
            return ApprovalDecision::Cancelled;
        }
        // An answer given through another replica, when the store relays.
        let relayed = async {
            match &pending.relay {
                Some(relay) => match relay.answered(&id).await.as_deref().and_then(decision) {
                    Some(d) => d,
                    None => std::future::pending().await,
                },
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = answer => answer.unwrap_or(ApprovalDecision::Cancelled),
            relayed = relayed => relayed,
        }
    }
}

/// An answer: `allow-once`, `allow-always` or `deny`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    decision: String,
}

/// `POST /v1/approvals/{id}`.
pub(crate) async fn answer(
    State(gw): State<Arc<Gateway>>,
    Path(id): Path<String>,
    crate::body::ApiJson(answer): crate::body::ApiJson<Answer>,
) -> Result<Json<Value>, ApiError> {
    let Some(decision) = decision(&answer.decision) else {
        return Err(ApiError::bad_request(format!(
            "`decision` is allow-once, allow-always or deny, not `{}`",
            answer.decision
        )));
    };
    let answered = Ok(Json(json!({"id": id, "decision": decision.as_str()})));
    let gone = Err(ApiError::not_found(format!(
        "no approval request `{id}` is waiting (answered, timed out, or its run ended)"
    )));
    // None: not waiting here; Some(offered): waiting here, and recorded in
    // the shared store.
    let here = gw.approvals.lock().get(&id).map(|w| w.offered);
    if let Some(relay) = gw.approvals.relay.as_ref().filter(|_| here != Some(false)) {
        // Replicas share the store: it decides which answer is the first,
        // whether the request waits here or on another replica.
        match relay.answer(&id, decision.as_str()).await {
            // Ours is the first answer. Waiting here, the request takes it
            // now (or from the store's notification, if that came first).
            Ok(true) => {
                if let Some(w) = gw.approvals.lock().remove(&id) {
                    let _ = w.answer.send(decision);
                }
                return answered;
            }
            Ok(false) => return gone,
            // The store is down: a request waiting here is still answered here.
            Err(e) if here.is_some() => {
                tracing::warn!(error = %e, "the approval is answered on this replica only");
            }
            Err(e) => return Err(e.into()),
        }
    }
    let waiting = gw.approvals.lock().remove(&id);
    if let Some(Ok(())) = waiting.map(|w| w.answer.send(decision)) {
        return answered;
    }
    gone
}
