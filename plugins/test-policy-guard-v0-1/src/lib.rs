//! Test fixture: `policy-guard` as a plugin built against the frozen API 0.1
//! (`wit/v0.1`, raw bindings, as the 0.1 SDK generated them). The host must
//! load it and it must behave exactly like the 0.2 `policy-guard`.
//!
//! Config: `{ "blockTools": [...], "blockWords": [...], "maxTextChars": 200 }`.

wit_bindgen::generate!({ world: "plugin-world", path: "../../wit/v0.1" });

use exports::openclaw::plugin::plugin::Guest;
use openclaw::plugin::host;
use openclaw::plugin::types::{
    BeforeToolCallOutcome, HookEvent, HookKind, HookOutcome, HookSubscription, Registration,
    ToolCall,
};
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

impl Guest for PolicyGuard {
    fn register() -> Registration {
        Registration {
            id: "policy-guard-v0-1".into(),
            version: "0.1.0".into(),
            tools: vec![],
            hooks: vec![HookSubscription {
                hook: HookKind::BeforeToolCall,
                priority: 100,
            }],
            harnesses: vec![],
        }
    }

    fn call_tool(call: ToolCall) -> Result<String, String> {
        Err(format!("policy-guard provides no tool `{}`", call.tool))
    }

    fn handle_hook(event: HookEvent) -> HookOutcome {
        match event {
            HookEvent::BeforeToolCall(e) => {
                let params: Value = serde_json::from_str(&e.params).unwrap_or(Value::Null);
                HookOutcome::BeforeToolCall(decide(&e.tool, &params))
            }
            _ => HookOutcome::Observed,
        }
    }
}

export!(PolicyGuard);
