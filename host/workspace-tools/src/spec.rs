//! What every workspace tool shares: its spec, and the run's workspace.

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{ApprovalRequest, RunContext, ToolError, ToolSpec};
use clawhost_tools::{Tool, ToolOrigin};
use serde_json::Value;

use crate::{Workspace, Workspaces};

/// A tool's spec and the workspaces it resolves against.
pub(crate) struct Base {
    pub spec: ToolSpec,
    workspaces: Arc<Workspaces>,
}

impl Base {
    /// A spec named `name` with `description` and parameter `schema`.
    pub fn new(workspaces: Arc<Workspaces>, name: &str, description: &str, schema: Value) -> Self {
        Self {
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters: schema.into(),
            },
            workspaces,
        }
    }

    /// The workspace of the run's agent.
    pub fn workspace(&self, ctx: &RunContext) -> Result<Arc<Workspace>, ToolError> {
        Ok(self.workspaces.for_agent(&ctx.agent_id)?)
    }
}

/// Parameter `key` as a string (`""` when absent).
pub(crate) fn text<'a>(params: &'a Value, key: &str) -> &'a str {
    params[key].as_str().unwrap_or_default()
}

/// Run blocking file work off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("the tool stopped: {e}"))?
}

/// A built-in tool: its spec, its work and whether a call needs approval.
#[async_trait]
pub(crate) trait HostTool: Send + Sync {
    /// Name, description and parameter schema.
    fn spec(&self) -> &ToolSpec;
    /// Run one call with validated parameters.
    async fn invoke(&self, params: Value, ctx: &RunContext) -> Result<Value, ToolError>;
    /// An approval the call needs first, if any.
    fn approval(&self, _params: &Value) -> Option<ApprovalRequest> {
        None
    }
}

/// A tool working on the run's workspace.
#[async_trait]
pub(crate) trait WorkspaceTool: Send + Sync {
    /// Its spec and workspaces.
    fn base(&self) -> &Base;
    /// Run one call in `ws`.
    async fn run(&self, params: Value, ws: Arc<Workspace>) -> Result<Value, ToolError>;
}

#[async_trait]
impl<T: WorkspaceTool> HostTool for T {
    fn spec(&self) -> &ToolSpec {
        &self.base().spec
    }
    async fn invoke(&self, params: Value, ctx: &RunContext) -> Result<Value, ToolError> {
        let ws = self.base().workspace(ctx)?;
        self.run(params, ws).await
    }
}

/// A [`HostTool`] as the registry takes it (origin: the host).
pub(crate) struct Builtin<T>(pub T);

#[async_trait]
impl<T: HostTool> Tool for Builtin<T> {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }
    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Host
    }
    async fn call(
        &self,
        _call_id: &str,
        params: clawhost_tools::SharedJson,
        ctx: &RunContext,
    ) -> Result<Value, ToolError> {
        self.0.invoke(params.into_value(), ctx).await
    }
    fn approval(&self, params: &Value) -> Option<ApprovalRequest> {
        self.0.approval(params)
    }
}
