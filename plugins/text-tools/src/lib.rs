//! Example tool plugin: text utilities, and reading notes from a granted directory.

use clawhost_sdk::{export_plugin, log, Level, Plugin, Registration, ToolCall, ToolDef};
use serde_json::{json, Value};

struct TextTools;

/// Where the operator may mount the notes directory (see `openclaw.plugin.json`).
const NOTES_DIR: &str = "/notes";

impl Plugin for TextTools {
    fn register() -> Registration {
        Registration::new("text-tools", "0.1.0")
            .tool(ToolDef::new(
                "word_count",
                "Count the words, lines and characters of a text.",
                json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"],
                    "additionalProperties": false
                }),
            ))
            .tool(ToolDef::new(
                "read_note",
                "Read a note by file name from the notes directory.",
                json!({
                    "type": "object",
                    "properties": { "name": { "type": "string", "minLength": 1 } },
                    "required": ["name"],
                    "additionalProperties": false
                }),
            ))
    }

    fn call_tool(call: ToolCall) -> Result<Value, String> {
        match call.tool.as_str() {
            "word_count" => {
                let text = call.params["text"].as_str().unwrap_or_default();
                log(Level::Debug, &format!("counting {} bytes", text.len()));
                Ok(json!({
                    "words": text.split_whitespace().count(),
                    "lines": text.lines().count(),
                    "chars": text.chars().count(),
                }))
            }
            "read_note" => {
                let name = call.params["name"].as_str().unwrap_or_default();
                if name.contains('/') || name.contains("..") {
                    return Err(format!("`{name}` is not a plain file name"));
                }
                let path = format!("{NOTES_DIR}/{name}");
                std::fs::read_to_string(&path)
                    .map(|text| json!({ "name": name, "text": text }))
                    .map_err(|e| format!("cannot read {path}: {e}"))
            }
            other => Err(format!("unknown tool `{other}`")),
        }
    }
}

export_plugin!(TextTools);
