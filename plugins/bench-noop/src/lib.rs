//! Benchmark fixture: `before_tool_call` allows, `after_tool_call` keeps, and
//! the tool `measure` answers how large its `data` argument is. The plugin id
//! is `noop` unless its config sets `id`, so a benchmark can install many
//! copies of one component under different ids.

use clawhost_sdk::{
    config, export_plugin, AfterDecision, AfterToolCall, BeforeDecision, BeforeToolCall,
    HookKind, Plugin, Registration, ToolCall, ToolDef,
};
use serde_json::{json, Value};

struct Noop;

impl Plugin for Noop {
    fn register() -> Registration {
        let id = config()["id"].as_str().unwrap_or("noop").to_string();
        Registration::new(&id, "0.1.0")
            .tool(ToolDef::new(
                &format!("{}_measure", id.replace('-', "_")),
                "Answers the size of `data` once serialized.",
                json!({ "type": "object", "properties": { "data": {} } }),
            ))
            .hook(HookKind::BeforeToolCall, 0)
            .hook(HookKind::AfterToolCall, 0)
    }

    fn before_tool_call(_event: BeforeToolCall) -> BeforeDecision {
        BeforeDecision::Allow
    }

    fn after_tool_call(_event: AfterToolCall) -> AfterDecision {
        AfterDecision::Keep
    }

    fn call_tool(call: ToolCall) -> Result<Value, String> {
        let bytes = call.params["data"].to_string().len();
        Ok(json!({ "bytes": bytes }))
    }
}

export_plugin!(Noop);
