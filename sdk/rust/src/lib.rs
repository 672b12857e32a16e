//! Rust SDK for clawhost plugins, plugin API 0.2 (0.2.3).
//!
//! A tool and hook plugin implements [`Plugin`] (every method has a default)
//! and calls [`export_plugin!`]; an agent runtime implements [`Harness`] and
//! calls [`export_harness!`]. Build for `wasm32-wasip2`; the output is a
//! component the host loads. State lives in your type and is reached through
//! `&self` (use `Cell`/`RefCell` for what changes). This crate depends on no
//! host crate: its `wit/` directory is the whole contract.
//!
//! ```ignore
//! use clawhost_sdk::{export_plugin, Plugin, Tools};
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Greet { name: String }
//! #[derive(Default)]
//! struct Hello;
//! impl Plugin for Hello {
//!     fn tools(&self, tools: &mut Tools<Self>) {
//!         tools.add("greet", "Greets someone", |_, p: Greet| {
//!             Ok::<_, String>(format!("hello, {}", p.name))
//!         });
//!     }
//! }
//! export_plugin!(Hello);
//! ```

#[doc(hidden)]
pub mod bindings {
    /// The `plugin` world: tools and hooks.
    pub mod plugin {
        wit_bindgen::generate!({
            world: "plugin",
            path: "wit",
            additional_derives: [PartialEq],
            pub_export_macro: true,
            export_macro_name: "__export_plugin_world",
            default_bindings_module: "clawhost_sdk::bindings::plugin",
        });
    }
    /// The `harness-plugin` world: agent runtimes.
    pub mod harness {
        wit_bindgen::generate!({
            world: "harness-plugin",
            path: "wit",
            with: {
                "openclaw:plugin/types@0.2.3": crate::bindings::plugin::openclaw::plugin::types,
                "openclaw:plugin/host@0.2.3": crate::bindings::plugin::openclaw::plugin::host,
            },
            pub_export_macro: true,
            export_macro_name: "__export_harness_world",
            default_bindings_module: "clawhost_sdk::bindings::harness",
        });
    }
}

mod adapter;
mod events;
mod harness;
mod json;
mod tools;

pub use adapter::Adapter;
pub use events::*;
pub use harness::{Harness, HarnessAdapter};
pub use json::Json;
pub use tools::{ToolCall, Tools};

/// Re-exported for `#[derive(JsonSchema)]` users who prefer one dependency.
pub use schemars;

pub use bindings::harness::exports::openclaw::plugin::harness::{
    AttemptError, Claim, PreparedTurn, Route, Support,
};
pub use bindings::harness::openclaw::plugin::agent_turn::{
    ModelRequest, ReplyStream, ToolOutput, Turn,
};

/// Bridging a native agent runtime that runs its own model loop (API 0.2.2):
/// [`native::open_process`] starts a process the operator granted by name
/// (the manifest asks with `capabilities.processes`); the other functions
/// report the runtime's turn (streamed text, replies, its own tool calls
/// and their results, its thread) so the host's hooks, approvals and
/// transcript see it. [`native::gate_tool`] asks the host before the
/// runtime runs one of its own tools; [`native::compaction`] (API 0.2.3)
/// tells the host the runtime compacts its own context, and
/// [`native::tool_endpoint`] (API 0.2.3) serves the turn's tools over MCP.
pub mod native {
    pub use crate::bindings::harness::openclaw::plugin::native_runtime::{
        gate_tool, open_process, record_reply, record_tool_result, set_thread, stream_text,
        thread_id, Process, ProcessError, Verdict,
    };
    pub use crate::bindings::harness::openclaw::plugin::native_turn::{
        compaction, tool_endpoint, CompactionPhase, McpEndpoint,
    };
    pub use crate::native_rpc::{Incoming, Rpc, WireError};
}

mod native_rpc;
pub use bindings::plugin::openclaw::plugin::types::{
    AssistantMessage, CallContext, Message, ModelError, ModelReply, SessionEndReason, StopReason,
    ToolError, ToolRequest, ToolResultMessage, ToolSpec, Usage, WireApi,
};

/// The WIT package version this SDK is built against.
pub const API_VERSION: &str = "0.2.3";

/// Log levels for [`log`].
pub use bindings::plugin::openclaw::plugin::host::Level;

/// Write a line into the host's log, tagged with this plugin's id.
pub fn log(level: Level, message: &str) {
    bindings::plugin::openclaw::plugin::host::log(level, message);
}

/// This plugin's configuration as set by the operator (`null` when unset).
pub fn config() -> serde_json::Value {
    serde_json::from_str(&bindings::plugin::openclaw::plugin::host::config())
        .unwrap_or(serde_json::Value::Null)
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::Failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::Failed(message.into())
    }
}

impl From<ModelError> for AttemptError {
    fn from(e: ModelError) -> Self {
        AttemptError::Model(e)
    }
}

impl From<String> for AttemptError {
    fn from(message: String) -> Self {
        AttemptError::Failed(message)
    }
}

/// A tool and hook plugin. Every method has a default: implement the ones
/// you need. One value is created (with `Default`) when the instance starts
/// and every call reaches it through `&self`.
pub trait Plugin: Default + 'static {
    /// Declare the plugin's tools; called once.
    fn tools(&self, _tools: &mut Tools<Self>) {}

    /// The hooks to receive, with priorities (higher runs first); called once.
    fn hooks(&self) -> Vec<(Hook, i32)> {
        Vec::new()
    }

    /// The tools whose calls a tool hook (`BeforeToolCall`, `AfterToolCall`, `ToolResult`)
    /// receives: names or globs (`*`, `?`), without regard to ASCII case.
    /// Empty (the default): every call. Called once.
    fn tool_filter(&self, _hook: Hook) -> Vec<String> {
        Vec::new()
    }

    /// Handle `before_tool_call`.
    fn before_tool_call(&self, _event: BeforeToolCall) -> BeforeDecision {
        BeforeDecision::Allow
    }

    /// Learn how an approval this plugin asked for was answered (OpenClaw's
    /// `onResolution`).
    fn approval_resolved(&self, _event: ApprovalResolution) {}

    /// Handle `tool_result_persist`: `Some` is the text stored for the result
    /// instead (the model saw the original).
    fn tool_result_persist(&self, _event: ToolResultPersistEvent) -> Option<String> {
        None
    }

    /// Handle `before_message_write`.
    fn before_message_write(&self, _event: MessageWriteEvent) -> WriteDecision {
        WriteDecision::Keep
    }

    /// Handle `tool_result`: replace the result the model sees, or keep it.
    fn tool_result(&self, _event: AfterToolCall) -> ResultDecision {
        ResultDecision::Keep
    }

    /// Handle `before_prompt_build`: `Some` edits the prompt.
    fn before_prompt_build(&self, _event: BeforePromptBuildEvent) -> Option<PromptEdit> {
        None
    }

    /// Handle `before_model_resolve`: `Some` runs another provider and/or
    /// model of the host's catalog.
    fn before_model_resolve(&self, _event: ModelResolveEvent) -> Option<ModelOverride> {
        None
    }

    /// Handle `before_agent_start`: `Err(reason)` stops the run.
    fn before_agent_start(&self, _event: AgentStartEvent) -> Result<(), String> {
        Ok(())
    }

    /// Handle `before_agent_run` (any runtime): `Err(reason)` stops the turn.
    fn before_agent_run(&self, _event: TurnEvent) -> Result<(), String> {
        Ok(())
    }

    /// Handle `before_agent_reply`: `Some(text)` is the turn's answer and the
    /// runtime does not run (empty text: silence).
    fn before_agent_reply(&self, _event: TurnEvent) -> Option<String> {
        None
    }

    /// Handle `before_agent_finalize`: look at the runtime's final answer;
    /// [`Finalize::Revise`] asks for one more pass.
    fn before_agent_finalize(&self, _event: FinalizeEvent) -> Finalize {
        Finalize::Proceed
    }

    /// Handle `agent_turn_prepare` (any runtime, before
    /// `before_prompt_build`): context put around the user's message.
    fn agent_turn_prepare(&self, _event: TurnEvent) -> Option<TurnContext> {
        None
    }

    /// Handle `resolve_exec_env`: `(name, value)` variables for the command
    /// the host's `exec` is about to run (only the names the operator granted
    /// in `grants.execEnv` are set).
    fn resolve_exec_env(&self, _event: ExecEvent) -> Vec<(String, String)> {
        Vec::new()
    }

    /// `Some(priority)` to offer compaction summaries (the operator must
    /// grant `grants.compaction`); called once.
    fn compaction_priority(&self) -> Option<i32> {
        None
    }

    /// Write the summary of older context; `None` leaves it to the next
    /// provider or the host's model call.
    fn summarize(&self, _event: BeforeCompactionEvent) -> Option<String> {
        None
    }

    /// Observe an observe-only hook.
    fn observe(&self, _event: Observed) {}
}

/// Export a [`Plugin`] as the component's tool provider and hook families.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        type __ClawhostPluginExport = $crate::Adapter<$plugin>;
        $crate::bindings::plugin::__export_plugin_world!(
            __ClawhostPluginExport with_types_in $crate::bindings::plugin
        );
    };
}

/// Export a [`Harness`] as the component's agent runtime.
#[macro_export]
macro_rules! export_harness {
    ($harness:ty) => {
        type __ClawhostHarnessExport = $crate::HarnessAdapter<$harness>;
        $crate::bindings::harness::__export_harness_world!(
            __ClawhostHarnessExport with_types_in $crate::bindings::harness
        );
    };
}
