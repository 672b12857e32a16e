//! Example policy hook: blocks tool calls by rule and rewrites oversized parameters.
//!
//! Config (`plugins.entries.policy-guard.config`):
//! `{ "blockTools": ["name", ...], "blockWords": ["word", ...], "maxTextChars": 200,
//!    "onlyTools": ["glob", ...] }`.
//! A call to a listed tool, or whose parameters contain a listed word, is blocked;
//! a `text` parameter longer than `maxTextChars` is truncated. With `onlyTools`,
//! the hook only receives calls of the tools those names or globs match.

use clawhost_sdk::{export_plugin, BeforeDecision, BeforeToolCall, Hook, Plugin};
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
        BeforeDecision::Allow
    }
}

export_plugin!(PolicyGuard);
