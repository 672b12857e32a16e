//! Rust SDK for clawhost plugins.
//!
//! Implement [`Plugin`] (only [`Plugin::register`] is required) and call
//! [`export_plugin!`]. Build for `wasm32-wasip2`; the output is a component the
//! host loads. This crate depends on no host crate: the WIT files in `wit/` are
//! the whole contract.
//!
//! ```ignore
//! use clawhost_sdk::{export_plugin, Plugin, Registration, ToolCall, ToolDef};
//! struct Hello;
//! impl Plugin for Hello {
//!     fn register() -> Registration {
//!         Registration::new("hello", "0.1.0").tool(ToolDef::new(
//!             "hello", "Greets someone",
//!             serde_json::json!({"type":"object","properties":{"name":{"type":"string"}}}),
//!         ))
//!     }
//!     fn call_tool(call: ToolCall) -> Result<serde_json::Value, String> {
//!         let name = call.params["name"].as_str().unwrap_or("world");
//!         Ok(serde_json::json!({ "greeting": format!("hello, {name}") }))
//!     }
//! }
//! export_plugin!(Hello);
//! ```

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin-world",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "__export_plugin_world",
        default_bindings_module: "clawhost_sdk::bindings",
    });
}

mod adapter;
mod json;
mod registration;

pub use adapter::Adapter;
pub use json::Json;
pub use registration::{Registration, ToolDef};

use bindings::openclaw::plugin::types as wit;
pub use wit::{
    AfterCompactionEvent, AgentEndEvent, BeforeCompactionEvent, BeforePromptBuildEvent, CallContext, HookKind,
    LlmInputEvent, LlmOutputEvent, PromptEdit, SessionEndEvent, SessionStartEvent,
};

/// The WIT package version this SDK is built against.
pub const API_VERSION: &str = "0.1.0";

/// A tool call, with parameters parsed from JSON.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// Parameters, already validated by the host against the tool's schema.
    pub params: serde_json::Value,
    /// The run the call belongs to.
    pub context: CallContext,
}

/// The `before_tool_call` event.
#[derive(Debug, Clone)]
pub struct BeforeToolCall {
    /// The tool name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// Parameters as they stand after earlier hooks (parsed on first use).
    pub params: Json,
    /// The plugin providing the tool, or `None` for host tools.
    pub tool_plugin: Option<String>,
    /// The run the call belongs to.
    pub context: CallContext,
}

/// What a `before_tool_call` handler decides.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeDecision {
    /// Let the call go on unchanged.
    Allow,
    /// Stop the call with a reason the model sees.
    Block(String),
    /// Go on with these parameters instead.
    Rewrite(serde_json::Value),
}

/// The `after_tool_call` event.
#[derive(Debug, Clone)]
pub struct AfterToolCall {
    /// The tool name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The parameters the tool ran with (parsed on first use).
    pub params: Json,
    /// The tool's result or error message, after earlier hooks (parsed on first use).
    pub outcome: Result<Json, String>,
    /// How long the tool ran, in milliseconds.
    pub duration_ms: u64,
    /// The run the call belongs to.
    pub context: CallContext,
}

/// What an `after_tool_call` handler decides.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterDecision {
    /// Keep the result.
    Keep,
    /// Replace the result (or error) the model sees.
    Replace(Result<serde_json::Value, String>),
}

/// A clawhost plugin. Only [`Plugin::register`] is required.
pub trait Plugin {
    /// Describe the plugin: id, version, tools, hook subscriptions, harness ids.
    fn register() -> Registration;

    /// Run one of this plugin's tools.
    fn call_tool(call: ToolCall) -> Result<serde_json::Value, String> {
        Err(format!("this plugin has no tool named `{}`", call.tool))
    }

    /// Handle `before_tool_call` (only called when subscribed).
    fn before_tool_call(_event: BeforeToolCall) -> BeforeDecision {
        BeforeDecision::Allow
    }

    /// Handle `after_tool_call` (only called when subscribed).
    fn after_tool_call(_event: AfterToolCall) -> AfterDecision {
        AfterDecision::Keep
    }

    /// Handle `before_prompt_build`: `Some` edits the prompt.
    fn before_prompt_build(_event: BeforePromptBuildEvent) -> Option<PromptEdit> {
        None
    }

    /// Handle `before_compaction`: `Some` supplies the summary.
    fn before_compaction(_event: BeforeCompactionEvent) -> Option<String> {
        None
    }

    /// Observe an observe-only hook (`session_start`, `session_end`,
    /// `llm_input`, `llm_output`, `after_compaction`, `agent_end`).
    fn observe(_event: Observed) {}
}

/// The observe-only hook events.
#[derive(Debug, Clone)]
pub enum Observed {
    /// A session started or resumed.
    SessionStart(SessionStartEvent),
    /// A session ended.
    SessionEnd(SessionEndEvent),
    /// A model request is about to go out.
    LlmInput(LlmInputEvent),
    /// A model reply arrived.
    LlmOutput(LlmOutputEvent),
    /// Older context was summarized.
    AfterCompaction(AfterCompactionEvent),
    /// A turn ended.
    AgentEnd(AgentEndEvent),
}

/// Log levels for [`log`].
pub use bindings::openclaw::plugin::host::Level;

/// Write a line into the host's log, tagged with this plugin's id.
pub fn log(level: Level, message: &str) {
    bindings::openclaw::plugin::host::log(level, message);
}

/// This plugin's configuration as set by the operator (`null` when unset).
pub fn config() -> serde_json::Value {
    serde_json::from_str(&bindings::openclaw::plugin::host::config())
        .unwrap_or(serde_json::Value::Null)
}

/// Export a [`Plugin`] implementation as the component's `plugin` interface.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        type __ClawhostPluginExport = $crate::Adapter<$plugin>;
        $crate::bindings::__export_plugin_world!(
            __ClawhostPluginExport with_types_in $crate::bindings
        );
    };
}
