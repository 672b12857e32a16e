//! What every workspace tool shares: its spec, and the run's workspace.

use std::sync::Arc;

use clawhost_agent_core::{RunContext, ToolSpec};
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
                parameters: schema,
            },
            workspaces,
        }
    }

    /// The workspace of the run's agent.
    pub fn workspace(&self, ctx: &RunContext) -> Result<Arc<Workspace>, String> {
        self.workspaces
            .for_agent(&ctx.agent_id)
            .map_err(|e| e.to_string())
    }
}

/// Parameter `key` as a string (`""` when absent).
pub(crate) fn text<'a>(params: &'a Value, key: &str) -> &'a str {
    params[key].as_str().unwrap_or_default()
}

/// Run blocking file work off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("the tool stopped: {e}"))?
}

/// Implement `clawhost_tools::Tool` for a workspace tool with a `base` field
/// and an `async fn run(&self, params: Value, ws: Arc<Workspace>) -> Result<Value, String>`.
macro_rules! workspace_tool {
    ($ty:ty) => {
        #[async_trait::async_trait]
        impl clawhost_tools::Tool for $ty {
            fn spec(&self) -> &clawhost_agent_core::ToolSpec {
                &self.base.spec
            }
            fn origin(&self) -> clawhost_tools::ToolOrigin {
                clawhost_tools::ToolOrigin::Host
            }
            async fn call(
                &self,
                _call_id: &str,
                params: serde_json::Value,
                ctx: &clawhost_agent_core::RunContext,
            ) -> Result<serde_json::Value, String> {
                let ws = self.base.workspace(ctx)?;
                self.run(params, ws).await
            }
        }
    };
}
pub(crate) use workspace_tool;
