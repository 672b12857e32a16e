//! The `approvals` section: how approval requests of `before_tool_call`
//! hooks are answered when no operator is at a terminal, and how long an
//! operator has.

use serde::Deserialize;

/// How runs nobody watches (`clawhost run`) answer approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NonInteractivePolicy {
    /// Deny every request (the default: fail closed).
    #[default]
    Deny,
    /// Approve every request once.
    Allow,
}

/// `approvals`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalsConfig {
    /// The answer of runs without an operator.
    #[serde(default)]
    pub non_interactive: NonInteractivePolicy,
    /// How long an operator has when the request names no timeout, in
    /// milliseconds (1 to 600000; default 120000).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

/// Longest wait for an answer, in milliseconds, whatever a request asks.
pub const MAX_APPROVAL_TIMEOUT_MS: u64 = 600_000;

fn default_timeout_ms() -> u64 {
    120_000
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            non_interactive: NonInteractivePolicy::Deny,
            timeout_ms: default_timeout_ms(),
        }
    }
}
