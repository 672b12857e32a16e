//! An MCP server's tool as a host tool: it takes the one dispatch path
//! (policy, schema check, hooks, approvals, transcript) like any other.

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{
    ApprovalRequest, RunContext, Severity, TimeoutBehavior, ToolError, ToolSpec,
};
use clawhost_tools::{CheckedTool, CompiledSchema, SharedJson, Tool, ToolOrigin};
use serde_json::Value;

use crate::connection::Connection;

/// One tool of one server.
pub(crate) struct McpTool {
    pub(crate) checked: CheckedTool,
    /// Its name on the server.
    pub(crate) remote: String,
    pub(crate) server: Arc<Connection>,
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.checked.spec
    }

    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Mcp(self.server.name.clone())
    }

    async fn call(
        &self,
        _call_id: &str,
        params: SharedJson,
        _ctx: &RunContext,
    ) -> Result<Value, ToolError> {
        let result = self
            .server
            .call(&self.remote, params.into_value())
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        crate::result::tool_result(&result)
    }

    fn approval(&self, params: &Value) -> Option<ApprovalRequest> {
        self.server
            .config()
            .require_approval
            .then(|| ApprovalRequest {
                title: format!(
                    "let the agent call `{}` of MCP server `{}`",
                    self.remote, self.server.name
                ),
                description: clawhost_agent_core::text::clip(&params.to_string(), 200).into_owned(),
                severity: Severity::Warning,
                timeout_ms: None,
                timeout_behavior: TimeoutBehavior::Deny,
            })
    }

    fn compiled_schema(&self) -> Option<CompiledSchema> {
        Some(self.checked.schema.clone())
    }
}
