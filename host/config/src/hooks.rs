//! Per-plugin hook settings: the fail policy, deadline and priority of each hook.

use serde::Deserialize;

/// Hook names a plugin may subscribe to (the hook catalog; the `hooks` crate
/// checks that its catalog matches this list).
pub const HOOK_NAMES: &[&str] = &[
    "before_tool_call",
    "after_tool_call",
    "session_start",
    "session_end",
    "before_prompt_build",
    "llm_input",
    "llm_output",
    "before_compaction",
    "after_compaction",
    "agent_end",
];

/// What the host does when a hook handler traps, times out or answers wrongly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailPolicy {
    /// Fail closed: the guarded action does not happen (a tool call is
    /// blocked, a result withheld, a turn ended with an error).
    Block,
    /// Fail open: the failure is logged and the handler skipped.
    Ignore,
}

/// Operator settings for one hook of one plugin.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookSettings {
    /// Fail policy for this hook (overrides the plugin's `failPolicy`).
    #[serde(default)]
    pub fail_policy: Option<FailPolicy>,
    /// Deadline of one call of this hook, in milliseconds (default: the
    /// plugin call deadline, `plugins.limits.callTimeoutMs`).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Priority of this plugin's handler (higher runs first), overriding the
    /// one the plugin registered: the operator decides the order of policy.
    #[serde(default)]
    pub priority: Option<i32>,
}
