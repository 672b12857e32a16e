//! Approvals answered by the gateway's client: a run that asks for them
//! (`"approvals": "client"`) streams an `approval_request` event with an id,
//! and the client answers with `POST /v1/approvals/{id}`. The host's timeout
//! applies around the wait, as for an operator at a terminal.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::extract::{Path, State};
use axum::Json;
use clawhost_agent_core::{ApprovalDecision, Approver, PendingApproval};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::{ApiError, Gateway};

/// Requests waiting for a client's answer, by id.
#[derive(Default)]
pub struct Pending {
    waiting: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
    next: AtomicU64,
}

impl Pending {
    fn open(&self) -> (String, oneshot::Receiver<ApprovalDecision>) {
        let id = format!("appr-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        (id, rx)
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        clawhost_agent_core::lock(&self.waiting)
    }
}

/// Removes a request nobody answered (the host's timeout, the run ended).
struct Forget<'a>(&'a Pending, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
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
        answer.await.unwrap_or(ApprovalDecision::Cancelled)
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
    let decision = match answer.decision.as_str() {
        "allow-once" => ApprovalDecision::AllowOnce,
        "allow-always" => ApprovalDecision::AllowAlways,
        "deny" => ApprovalDecision::Deny,
        other => {
            return Err(ApiError::bad_request(format!(
                "`decision` is allow-once, allow-always or deny, not `{other}`"
            )))
        }
    };
    let waiting = gw.approvals.lock().remove(&id);
    match waiting.map(|tx| tx.send(decision)) {
        Some(Ok(())) => Ok(Json(json!({"id": id, "decision": decision.as_str()}))),
        _ => Err(ApiError::not_found(format!(
            "no approval request `{id}` is waiting (answered, timed out, or its run ended)"
        ))),
    }
}
