//! Example policy hook: blocks tool calls by rule and rewrites oversized parameters.
//!
//! Config (`plugins.entries.policy-guard.config`):
//! `{ "blockTools": ["name", ...], "blockWords": ["word", ...], "maxTextChars": 200,
//!    "onlyTools": ["glob", ...], "approveTools": ["name", ...],
//!    "approvalTimeoutMs": 60000, "approvalOnTimeout": "deny" }`.
//! A call to a listed tool, or whose parameters contain a listed word, is blocked;
//! a `text` parameter longer than `maxTextChars` is truncated; a call to an
//! `approveTools` tool waits for the operator's approval. With `onlyTools`,
//! the hook only receives calls of the tools those names or globs match.

use clawhost_sdk::{
    export_plugin, ApprovalRequest, ApprovalResolution, BeforeDecision, BeforeToolCall, Hook,
    Level, Plugin, TimeoutBehavior,
};
use serde_json::Value;

#[derive(Default)]
struct PolicyGuard;

fn strings(config: &Value, key: &str) -> Vec<String> {
    config[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_lowercase))
                .collect()
        })
        .unwrap_or_default()
}

impl Plugin for PolicyGuard {
    fn hooks(&self) -> Vec<(Hook, i32)> {
        vec![(Hook::BeforeToolCall, 100)]
    }

    fn tool_filter(&self, _hook: Hook) -> Vec<String> {
        strings(&clawhost_sdk::config(), "onlyTools")
    }

    fn before_tool_call(&self, event: BeforeToolCall) -> BeforeDecision {
        let config = clawhost_sdk::config();
        if strings(&config, "blockTools").contains(&event.tool.to_lowercase()) {
            return BeforeDecision::Block(format!(
                "policy-guard: tool `{}` is blocked by operator policy",
                event.tool
            ));
        }
        let params = event.params.to_string().to_lowercase();
        if let Some(word) = strings(&config, "blockWords")
            .into_iter()
            .find(|w| params.contains(w.as_str()))
        {
            return BeforeDecision::Block(format!(
                "policy-guard: parameters mention `{word}`, which policy forbids"
            ));
        }
        if let (Some(max), Some(text)) = (
            config["maxTextChars"].as_u64(),
            event.params["text"].as_str(),
        ) {
            if text.chars().count() as u64 > max {
                let mut params = event.params.value().clone();
                params["text"] = Value::String(text.chars().take(max as usize).collect());
                return BeforeDecision::Rewrite(params);
            }
        }
        if strings(&config, "approveTools").contains(&event.tool.to_lowercase()) {
            let mut request = ApprovalRequest::new(
                format!("Run `{}`", event.tool),
                format!("{} with {}", event.tool, event.params.value()),
            );
            request.timeout_ms = config["approvalTimeoutMs"]
                .as_u64()
                .map(|ms| ms.min(u64::from(u32::MAX)) as u32);
            if config["approvalOnTimeout"] == "allow" {
                request.timeout_behavior = TimeoutBehavior::Allow;
            }
            return BeforeDecision::RequireApproval(request);
        }
        BeforeDecision::Allow
    }

    fn approval_resolved(&self, event: ApprovalResolution) {
        clawhost_sdk::log(
            Level::Info,
            &format!(
                "approval of {} ({}): {:?}",
                event.tool, event.call_id, event.decision
            ),
        );
    }
}

export_plugin!(PolicyGuard);
