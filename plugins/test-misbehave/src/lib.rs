//! Test fixture: a plugin that misbehaves on request, to prove the sandbox and limits.
//! Not an example to copy.

use clawhost_sdk::{
    export_plugin, BeforeDecision, BeforeToolCall, HookKind, Plugin, Registration, ToolCall,
    ToolDef,
};
use serde_json::{json, Value};

struct Misbehave;

static mut CALLS: u64 = 0;

fn tool(name: &str, description: &str, props: Value) -> ToolDef {
    ToolDef::new(
        name,
        description,
        json!({ "type": "object", "properties": props }),
    )
}

impl Plugin for Misbehave {
    fn register() -> Registration {
        Registration::new("misbehave", "0.1.0")
            .tool(tool(
                "ping",
                "Answers pong and how many calls this instance served.",
                json!({}),
            ))
            .tool(tool("spin", "Loops forever.", json!({})))
            .tool(tool("hog", "Allocates memory without bound.", json!({})))
            .tool(tool("crash", "Panics (a wasm trap).", json!({})))
            .tool(tool(
                "read_path",
                "Reads any path.",
                json!({ "path": { "type": "string" } }),
            ))
            .tool(tool(
                "write_path",
                "Writes a file.",
                json!({ "path": { "type": "string" }, "text": { "type": "string" } }),
            ))
            .tool(tool(
                "env",
                "Reads an environment variable.",
                json!({ "name": { "type": "string" } }),
            ))
            .tool(tool(
                "print",
                "Writes to stdout and stderr.",
                json!({ "text": { "type": "string" } }),
            ))
            .hook(HookKind::BeforeToolCall, 1000)
    }

    /// Misbehaves inside the hook when a parameter says so; allows otherwise.
    fn before_tool_call(event: BeforeToolCall) -> BeforeDecision {
        match event.params["hook"].as_str() {
            Some("spin") => loop {
                std::hint::black_box(());
            },
            Some("crash") => panic!("hook crash requested"),
            _ => BeforeDecision::Allow,
        }
    }

    fn call_tool(call: ToolCall) -> Result<Value, String> {
        // SAFETY: components are single-threaded.
        let calls = unsafe {
            CALLS += 1;
            CALLS
        };
        let p = &call.params;
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
                .map_err(|e| e.to_string()),
            "write_path" => std::fs::write(
                p["path"].as_str().unwrap_or_default(),
                p["text"].as_str().unwrap_or_default(),
            )
            .map(|()| json!({ "written": true }))
            .map_err(|e| e.to_string()),
            "env" => {
                Ok(json!({ "value": std::env::var(p["name"].as_str().unwrap_or_default()).ok() }))
            }
            "print" => {
                let text = p["text"].as_str().unwrap_or_default();
                println!("{text}");
                eprintln!("err: {text}");
                Ok(json!({ "printed": true }))
            }
            other => Err(format!("unknown tool `{other}`")),
        }
    }
}

export_plugin!(Misbehave);
