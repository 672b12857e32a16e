//! Test fixture: a plugin that misbehaves on request, to prove the sandbox and limits.
//! Not an example to copy.

use std::cell::Cell;

use clawhost_sdk::{
    export_plugin, ApprovalRequest, BeforeDecision, BeforeToolCall, Hook, Observed, Plugin,
    ToolCall, ToolError, Tools,
};
use serde_json::{json, Value};

#[derive(Default)]
struct Misbehave {
    /// Calls this instance served (lost when the host discards the instance).
    calls: Cell<u64>,
}

fn tool(tools: &mut Tools<Misbehave>, name: &str, description: &str, props: Value) {
    tools.add_raw(
        name,
        description,
        json!({ "type": "object", "properties": props }),
        Misbehave::call_tool,
    );
}

impl Plugin for Misbehave {
    fn tools(&self, t: &mut Tools<Self>) {
        let path = json!({ "path": { "type": "string" } });
        tool(
            t,
            "ping",
            "Answers pong and how many calls this instance served.",
            json!({}),
        );
        tool(t, "spin", "Loops forever.", json!({}));
        tool(t, "hog", "Allocates memory without bound.", json!({}));
        tool(t, "crash", "Panics (a wasm trap).", json!({}));
        tool(t, "read_path", "Reads any path.", path);
        tool(
            t,
            "write_path",
            "Writes a file.",
            json!({ "path": { "type": "string" }, "text": { "type": "string" } }),
        );
        tool(
            t,
            "env",
            "Reads an environment variable.",
            json!({ "name": { "type": "string" } }),
        );
        tool(
            t,
            "print",
            "Writes to stdout and stderr.",
            json!({ "text": { "type": "string" } }),
        );
        // A registration that changes into one the host must refuse (its
        // schema does not compile) while `/data/declare-bad-schema` exists.
        if std::fs::metadata("/data/declare-bad-schema").is_ok() {
            tool(
                t,
                "odd",
                "Declares a schema that does not compile.",
                json!({ "x": { "type": "no-such-type" } }),
            );
        }
    }

    /// `before_tool_call` always; `llm_input` too when the config says
    /// `"spinOn": "llm_input"` (its handler then never returns);
    /// `agent_end` too while `/data/subscribe-agent-end` exists (a
    /// registration that depends on what the host does not key it by).
    fn hooks(&self) -> Vec<(Hook, i32)> {
        let mut hooks = vec![(Hook::BeforeToolCall, 1000)];
        if clawhost_sdk::config()["spinOn"] == "llm_input" {
            hooks.push((Hook::LlmInput, 0));
        }
        if std::fs::metadata("/data/subscribe-agent-end").is_ok() {
            hooks.push((Hook::AgentEnd, 0));
        }
        hooks
    }

    fn observe(&self, event: Observed) {
        if let Observed::LlmInput(_) = event {
            loop {
                std::hint::black_box(());
            }
        }
    }

    /// Misbehaves inside the hook when `hook` says so (`spin`, `crash`,
    /// `patch`: set `text` to `patch_text`, `block`, or `approve`: ask the
    /// operator); allows otherwise.
    fn before_tool_call(&self, event: BeforeToolCall) -> BeforeDecision {
        match event.params["hook"].as_str() {
            Some("spin") => loop {
                std::hint::black_box(());
            },
            Some("crash") => panic!("hook crash requested"),
            // A partial rewrite: only `text` is patched.
            Some("patch") => BeforeDecision::Rewrite(json!({ "text": event.params["patch_text"] })),
            Some("block") => BeforeDecision::Block("misbehave: asked to block".into()),
            Some("approve") => BeforeDecision::RequireApproval(ApprovalRequest::new(
                "misbehave asks",
                "asked to ask",
            )),
            _ => BeforeDecision::Allow,
        }
    }
}

impl Misbehave {
    fn call_tool(&self, call: ToolCall) -> Result<Value, ToolError> {
        self.calls.set(self.calls.get() + 1);
        let calls = self.calls.get();
        let p = &call.params;
        let failed = |e: std::io::Error| ToolError::Failed(e.to_string());
        match call.tool.as_str() {
            "ping" => Ok(json!({ "pong": true, "calls": calls })),
            "spin" => {
                let mut x: u64 = 0;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            "hog" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "crash" => panic!("crash requested"),
            "read_path" => std::fs::read_to_string(p["path"].as_str().unwrap_or_default())
                .map(|text| json!({ "text": text }))
                .map_err(failed),
            "write_path" => std::fs::write(
                p["path"].as_str().unwrap_or_default(),
                p["text"].as_str().unwrap_or_default(),
            )
            .map(|()| json!({ "written": true }))
            .map_err(failed),
            "env" => {
                Ok(json!({ "value": std::env::var(p["name"].as_str().unwrap_or_default()).ok() }))
            }
            "print" => {
                let text = p["text"].as_str().unwrap_or_default();
                println!("{text}");
                eprintln!("err: {text}");
                Ok(json!({ "printed": true }))
            }
            other => Err(format!("unknown tool `{other}`").into()),
        }
    }
}

export_plugin!(Misbehave);
