//! Benchmark fixture: `before_tool_call` allows, `after_tool_call` observes, and
//! the tool `<id>_measure` answers how large its `data` argument is. The
//! tool's name follows `config.id` (default `noop`), so a benchmark can
//! install many copies of one component under different manifest ids.

use clawhost_sdk::{
    config, export_plugin, BeforeDecision, BeforeToolCall, Hook, Observed, Plugin, ToolCall, Tools,
};
use serde_json::json;

#[derive(Default)]
struct Noop;

impl Plugin for Noop {
    fn tools(&self, tools: &mut Tools<Self>) {
        let id = config()["id"].as_str().unwrap_or("noop").replace('-', "_");
        tools.add_raw(
            &format!("{id}_measure"),
            "Answers the size of `data` once serialized.",
            json!({ "type": "object", "properties": { "data": {} } }),
            |_, call: ToolCall| Ok(json!({ "bytes": call.params["data"].to_string().len() })),
        );
    }

    fn hooks(&self) -> Vec<(Hook, i32)> {
        vec![(Hook::BeforeToolCall, 0), (Hook::AfterToolCall, 0)]
    }

    fn before_tool_call(&self, _event: BeforeToolCall) -> BeforeDecision {
        BeforeDecision::Allow
    }

    fn observe(&self, _event: Observed) {}
}

export_plugin!(Noop);
