//! Approval requests on the dispatch path: the timeout around the run's
//! approver, and the `allow-always` answers a session has given.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use clawhost_agent_core::{
    ApprovalDecision, ApprovalRequest, PendingApproval, RunContext, ToolCallRequest, TurnEvent,
};
use clawhost_config::{ApprovalsConfig, MAX_APPROVAL_TIMEOUT_MS};
use serde_json::Value;

/// `(session id, plugin id, tool name)` approved for the rest of a session.
type Standing = (String, String, String);

/// The approval settings and the `allow-always` answers of live sessions.
pub(crate) struct ApprovalMemory {
    config: ApprovalsConfig,
    always: Mutex<HashSet<Standing>>,
}

impl ApprovalMemory {
    pub(crate) fn new(config: ApprovalsConfig) -> Self {
        Self {
            config,
            always: Mutex::new(HashSet::new()),
        }
    }

    /// The request as the operator is asked it, with its timeout settled:
    /// the request's own, else `approvals.timeoutMs`, never past the cap.
    pub(crate) fn pending(
        &self,
        plugin_id: String,
        call: &ToolCallRequest,
        params: &Value,
        ctx: &RunContext,
        request: ApprovalRequest,
    ) -> PendingApproval {
        let ms = request
            .timeout_ms
            .map(u64::from)
            .unwrap_or(self.config.timeout_ms)
            .clamp(1, MAX_APPROVAL_TIMEOUT_MS);
        PendingApproval {
            plugin_id,
            tool: call.name.clone(),
            call_id: call.id.clone(),
            params: params.clone(),
            session_id: ctx.session_id.clone(),
            request,
            timeout: Duration::from_millis(ms),
        }
    }

    fn standing(p: &PendingApproval) -> Option<Standing> {
        let session = p.session_id.clone()?;
        Some((session, p.plugin_id.clone(), p.tool.to_ascii_lowercase()))
    }

    /// Answer a request: an `allow-always` this session gave the same plugin
    /// for the same tool stands; otherwise the run's approver is asked, and
    /// no answer within the timeout is `timeout`. The answer is reported as a
    /// run event.
    pub(crate) async fn ask(
        &self,
        pending: &PendingApproval,
        ctx: &RunContext,
    ) -> ApprovalDecision {
        let key = Self::standing(pending);
        let remembered = key
            .as_ref()
            .is_some_and(|k| clawhost_agent_core::lock(&self.always).contains(k));
        let decision = if remembered {
            ApprovalDecision::AllowAlways
        } else {
            let approver = ctx.approvals.0.clone();
            tokio::time::timeout(pending.timeout, approver.decide(pending))
                .await
                .unwrap_or(ApprovalDecision::Timeout)
        };
        if decision == ApprovalDecision::AllowAlways && !remembered {
            if let Some(key) = key {
                clawhost_agent_core::lock(&self.always).insert(key);
            }
        }
        ctx.events.emit(TurnEvent::Approval {
            plugin: pending.plugin_id.clone(),
            call_id: pending.call_id.clone(),
            tool: pending.tool.clone(),
            title: pending.request.title.clone(),
            decision: if remembered {
                "allow-always (remembered)".into()
            } else {
                decision.as_str().into()
            },
        });
        decision
    }

    /// Forget the standing answers of a session.
    pub(crate) fn forget(&self, session_id: &str) {
        clawhost_agent_core::lock(&self.always).retain(|(s, _, _)| s != session_id);
    }
}
