//! Example tool plugin: text utilities, and reading notes from a granted
//! directory. Parameters are typed: each tool's JSON Schema is derived from
//! its parameter struct.

use clawhost_sdk::{export_plugin, log, Level, Plugin, ToolError, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Where the operator may mount the notes directory (see `openclaw.plugin.json`).
const NOTES_DIR: &str = "/notes";

#[derive(Default)]
struct TextTools;

/// Parameters of `word_count`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordCount {
    /// The text to count.
    text: String,
}

/// Parameters of `read_note`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadNote {
    /// A plain file name in the notes directory.
    #[schemars(length(min = 1))]
    name: String,
}

impl TextTools {
    fn word_count(&self, p: WordCount) -> Result<Value, ToolError> {
        log(Level::Debug, &format!("counting {} bytes", p.text.len()));
        Ok(json!({
            "words": p.text.split_whitespace().count(),
            "lines": p.text.lines().count(),
            "chars": p.text.chars().count(),
        }))
    }

    fn read_note(&self, p: ReadNote) -> Result<Value, ToolError> {
        let name = p.name;
        if name.contains('/') || name.contains("..") {
            return Err(ToolError::InvalidParams(format!(
                "`{name}` is not a plain file name"
            )));
        }
        let path = format!("{NOTES_DIR}/{name}");
        std::fs::read_to_string(&path)
            .map(|text| json!({ "name": name, "text": text }))
            .map_err(|e| ToolError::Failed(format!("cannot read {path}: {e}")))
    }
}

impl Plugin for TextTools {
    fn tools(&self, tools: &mut Tools<Self>) {
        tools
            .add(
                "word_count",
                "Count the words, lines and characters of a text.",
                Self::word_count,
            )
            .add(
                "read_note",
                "Read a note by file name from the notes directory.",
                Self::read_note,
            );
    }
}

export_plugin!(TextTools);
