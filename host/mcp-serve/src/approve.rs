//! Approvals asked of the MCP client: as an elicitation (a yes/no form)
//! when the client declared it can answer one, else answered by
//! `approvals.nonInteractive`.

use async_trait::async_trait;
use clawhost_agent_core::{ApprovalDecision, Approver, PendingApproval};
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::ElicitationMode;
use rmcp::service::{Peer, RoleServer};
use serde_json::json;

/// Asks the connected client; `fallback` answers when it cannot.
pub(crate) struct ElicitingApprover {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) fallback: ApprovalDecision,
}

#[async_trait]
impl Approver for ElicitingApprover {
    async fn decide(&self, pending: &PendingApproval) -> ApprovalDecision {
        if !self
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return self.fallback;
        }
        let params = json!({
            "mode": "form",
            "message": format!(
                "{} asks: {} — {}",
                pending.plugin_id, pending.request.title, pending.request.description
            ),
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": format!("Let `{}` run", pending.tool),
                }},
                "required": ["approve"],
            },
        });
        let params: ElicitRequestParams = match serde_json::from_value(params) {
            Ok(params) => params,
            Err(e) => {
                tracing::warn!(error = %e, "the approval form does not build");
                return self.fallback;
            }
        };
        match self.peer.create_elicitation(params).await {
            Ok(answer) => match answer.action {
                ElicitationAction::Accept
                    if answer
                        .content
                        .as_ref()
                        .is_some_and(|c| c["approve"] == true) =>
                {
                    ApprovalDecision::AllowOnce
                }
                ElicitationAction::Cancel => ApprovalDecision::Cancelled,
                // Declined, or accepted without a yes.
                _ => ApprovalDecision::Deny,
            },
            // A client on a revision without server requests, or one that
            // failed to answer: the operator's policy decides.
            Err(e) => {
                tracing::info!(error = %e, "the MCP client did not answer the approval; approvals.nonInteractive decides");
                self.fallback
            }
        }
    }
}
