//! Asking the operator to approve a tool call (OpenClaw's `requireApproval`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

/// How much the operator should worry about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Routine.
    Info,
    /// Worth a look.
    Warning,
    /// Dangerous.
    Critical,
}

impl Severity {
    /// `info`, `warning` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// What an unanswered request means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeoutBehavior {
    /// The call is denied (the default).
    #[default]
    Deny,
    /// The call goes on.
    Allow,
}

/// What a hook asks the operator (the fields of OpenClaw's `requireApproval`).
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// One line shown to the operator.
    pub title: String,
    /// What the call will do.
    pub description: String,
    /// How much to worry.
    pub severity: Severity,
    /// How long to wait; `None`: the host's default.
    pub timeout_ms: Option<u32>,
    /// What an unanswered request means.
    pub timeout_behavior: TimeoutBehavior,
}

/// A call waiting for the operator's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    /// The plugin that asked.
    pub plugin_id: String,
    /// The tool.
    pub tool: String,
    /// The model's id for the call.
    pub call_id: String,
    /// The parameters the call will run with if approved (frozen).
    pub params: Value,
    /// Session id, if the run belongs to one.
    pub session_id: Option<String>,
    /// What the plugin asks.
    pub request: ApprovalRequest,
    /// How long the operator has.
    pub timeout: Duration,
}

/// How a request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Approved for this call.
    AllowOnce,
    /// Approved for this call and later calls of the same tool that the same
    /// plugin asks about in this session.
    AllowAlways,
    /// Denied.
    Deny,
    /// Nobody answered in time.
    Timeout,
    /// No answer could be had (no operator, input closed, run ended).
    Cancelled,
}

impl ApprovalDecision {
    /// OpenClaw's name: `allow-once`, `allow-always`, `deny`, `timeout`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowOnce => "allow-once",
            ApprovalDecision::AllowAlways => "allow-always",
            ApprovalDecision::Deny => "deny",
            ApprovalDecision::Timeout => "timeout",
            ApprovalDecision::Cancelled => "cancelled",
        }
    }

    /// Whether the call may go on, given what a timeout means.
    pub fn allows(self, on_timeout: TimeoutBehavior) -> bool {
        match self {
            ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways => true,
            ApprovalDecision::Timeout => on_timeout == TimeoutBehavior::Allow,
            ApprovalDecision::Deny | ApprovalDecision::Cancelled => false,
        }
    }
}

/// Who answers approval requests: the operator at a terminal, a gateway
/// client, or a policy for runs nobody watches. The host applies the
/// timeout around [`Approver::decide`]; an approver need not.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Answer one request.
    async fn decide(&self, pending: &PendingApproval) -> ApprovalDecision;
}

/// An approver that answers every request the same way (the policy of
/// non-interactive runs).
#[derive(Debug, Clone, Copy)]
pub struct FixedApprover(pub ApprovalDecision);

#[async_trait]
impl Approver for FixedApprover {
    async fn decide(&self, _pending: &PendingApproval) -> ApprovalDecision {
        self.0
    }
}

/// The approver of a run. The default denies everything: no operator was
/// given to ask, and an unanswerable request fails closed.
#[derive(Clone)]
pub struct Approvals(pub Arc<dyn Approver>);

impl Approvals {
    /// The policy of runs nobody watches (`approvals.nonInteractive`):
    /// `run`, the gateway.
    pub fn non_interactive(config: &clawhost_config::ApprovalsConfig) -> Self {
        let answer = match config.non_interactive {
            clawhost_config::NonInteractivePolicy::Deny => ApprovalDecision::Deny,
            clawhost_config::NonInteractivePolicy::Allow => ApprovalDecision::AllowOnce,
        };
        Self(Arc::new(FixedApprover(answer)))
    }
}

impl Default for Approvals {
    fn default() -> Self {
        Approvals(Arc::new(FixedApprover(ApprovalDecision::Cancelled)))
    }
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Approvals")
    }
}
