//! Tools: definitions and parameter schemas, tool policy, and the single
//! dispatch path (policy → validation → `before_tool_call` → tool →
//! `after_tool_call`) that every tool call goes through, whatever its origin.

mod approvals;
mod builtin;
mod content;
mod dispatch;
mod policy;
mod registry;

pub use builtin::EchoTool;
/// A tool call's parameters and result as the dispatch path shares them.
pub use clawhost_hooks::SharedJson;
pub use dispatch::{report_hook_decisions, ToolDispatcher, HOST_APPROVER};
pub use policy::{group, PolicyDenial, ToolPolicy, GROUPS, MCP_GROUP};
pub use registry::{
    compile_schema, CheckedTool, CompiledSchema, RegistryError, Tool, ToolLimits, ToolOrigin,
    ToolRegistry,
};
