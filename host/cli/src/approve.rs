//! Who answers approval requests at each entry point: the operator at the
//! terminal (`chat`), the configured policy (`run`), a scripted operator
//! (`demo`).

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{ApprovalDecision, Approver, PendingApproval, TimeoutBehavior};

use crate::input::{Input, Lines};

/// The question put to the operator, in a few lines.
pub fn describe(p: &PendingApproval) -> String {
    let on_timeout = match p.request.timeout_behavior {
        TimeoutBehavior::Deny => "deny",
        TimeoutBehavior::Allow => "allow",
    };
    format!(
        "approval needed ({}) · plugin {} · tool {} ({})\n  {}\n  {}\n  [o]nce / [a]lways for this session / [d]eny — {} s, then {on_timeout}",
        p.request.severity.as_str(),
        p.plugin_id,
        p.tool,
        p.call_id,
        p.request.title,
        p.request.description,
        p.timeout.as_secs(),
    )
}

/// An answer typed by the operator; `None` if it is not one.
pub fn parse_answer(line: &str) -> Option<ApprovalDecision> {
    match line.trim().to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" | "allow" => Some(ApprovalDecision::AllowOnce),
        "a" | "always" => Some(ApprovalDecision::AllowAlways),
        "d" | "deny" | "n" | "no" => Some(ApprovalDecision::Deny),
        _ => None,
    }
}

/// Asks the operator at the terminal (`chat`).
pub struct TerminalApprover {
    lines: Arc<Lines>,
}

impl TerminalApprover {
    /// An approver reading answers from `lines`.
    pub fn new(lines: Arc<Lines>) -> Self {
        Self { lines }
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn decide(&self, pending: &PendingApproval) -> ApprovalDecision {
        say!("{}", describe(pending));
        loop {
            let Some(Input::Line(line)) = self.lines.read("approve › ").await else {
                // End of input, or Ctrl-C at the question.
                return ApprovalDecision::Cancelled;
            };
            match parse_answer(&line) {
                Some(decision) => return decision,
                None => say!("answer o (once), a (always for this session) or d (deny)"),
            }
        }
    }
}

/// The demo's operator: shows the question and answers `allow-once`.
pub struct ScriptedOperator;

#[async_trait]
impl Approver for ScriptedOperator {
    async fn decide(&self, pending: &PendingApproval) -> ApprovalDecision {
        say!("{}", describe(pending));
        say!("  operator (scripted) › o");
        ApprovalDecision::AllowOnce
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_and_anything_else_is_asked_again() {
        assert_eq!(parse_answer(" O "), Some(ApprovalDecision::AllowOnce));
        assert_eq!(parse_answer("always"), Some(ApprovalDecision::AllowAlways));
        assert_eq!(parse_answer("d"), Some(ApprovalDecision::Deny));
        assert_eq!(parse_answer("maybe"), None);
        assert_eq!(parse_answer(""), None);
    }
}
