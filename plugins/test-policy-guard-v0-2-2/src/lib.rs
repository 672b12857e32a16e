//! Test fixture: `policy-guard` as a plugin built against the released API
//! 0.2.2 (raw bindings of the 0.2.2 WIT, copied unchanged into `wit/deps`).
//! A host serving 0.2.3 must load it and it must behave exactly like the
//! SDK-built `policy-guard`.
//!
//! Config: `{ "blockTools": [...], "blockWords": [...], "maxTextChars": 200 }`.

wit_bindgen::generate!({ world: "guard", path: "wit", generate_all });

use exports::openclaw::plugin::tool_hooks::{
    AfterToolCallEvent, BeforeToolCallEvent, BeforeToolCallOutcome, Guest as ToolHooks,
    Subscription, ToolHook, ToolResultOutcome,
};
use exports::openclaw::plugin::tool_provider::{Guest as ToolProvider, ToolCall};
use openclaw::plugin::host;
use openclaw::plugin::types::{ToolError, ToolSpec};
use serde_json::Value;

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

fn decide(tool: &str, params: &Value) -> BeforeToolCallOutcome {
    let config: Value = serde_json::from_str(&host::config()).unwrap_or(Value::Null);
    if strings(&config, "blockTools").contains(&tool.to_lowercase()) {
        return BeforeToolCallOutcome::Block(format!(
            "policy-guard: tool `{tool}` is blocked by operator policy"
        ));
    }
    let text = params.to_string().to_lowercase();
    if let Some(word) = strings(&config, "blockWords")
        .into_iter()
        .find(|w| text.contains(w.as_str()))
    {
        return BeforeToolCallOutcome::Block(format!(
            "policy-guard: parameters mention `{word}`, which policy forbids"
        ));
    }
    if let (Some(max), Some(text)) = (config["maxTextChars"].as_u64(), params["text"].as_str()) {
        if text.chars().count() as u64 > max {
            let mut params = params.clone();
            params["text"] = Value::String(text.chars().take(max as usize).collect());
            return BeforeToolCallOutcome::Rewrite(params.to_string());
        }
    }
    BeforeToolCallOutcome::Allow
}

impl ToolProvider for PolicyGuard {
    fn tools() -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call(call: ToolCall) -> Result<String, ToolError> {
        Err(ToolError::Failed(format!(
            "policy-guard provides no tool `{}`",
            call.tool
        )))
    }
}

impl ToolHooks for PolicyGuard {
    fn subscriptions() -> Vec<Subscription> {
        vec![Subscription {
            hook: ToolHook::BeforeToolCall,
            priority: 100,
            tools: Vec::new(),
        }]
    }

    fn before_tool_call(e: BeforeToolCallEvent) -> BeforeToolCallOutcome {
        let params: Value = serde_json::from_str(&e.params).unwrap_or(Value::Null);
        decide(&e.tool, &params)
    }

    fn after_tool_call(_e: AfterToolCallEvent) {}

    fn tool_result(_e: AfterToolCallEvent) -> ToolResultOutcome {
        ToolResultOutcome::Keep
    }
}

export!(PolicyGuard);
