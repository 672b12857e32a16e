//! What every workspace tool shares: its spec (the schema derived from its
//! typed parameters, as the SDK derives a plugin tool's), and the run's
//! workspace.

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{ApprovalRequest, RunContext, ToolError, ToolSpec};
use clawhost_tools::{Tool, ToolOrigin};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Workspace, Workspaces};

/// The JSON Schema of parameters `P` (what the SDK offers plugin authors:
/// `serde` + `schemars`).
pub(crate) fn schema<P: JsonSchema>() -> Value {
    schemars::schema_for!(P).to_value()
}

/// `params` as `P`. The dispatcher checked them against `P`'s schema, so
/// this fails only for what the schema cannot say.
pub(crate) fn parse<P: DeserializeOwned>(params: Value) -> Result<P, ToolError> {
    serde_json::from_value(params).map_err(|e| ToolError::invalid(e.to_string()))
}

/// A tool's spec and the workspaces it resolves against.
pub(crate) struct Base {
    pub spec: ToolSpec,
    workspaces: Arc<Workspaces>,
}

impl Base {
    /// A spec named `name` with `description`, taking parameters `P`.
    pub fn new<P: JsonSchema>(workspaces: Arc<Workspaces>, name: &str, description: &str) -> Self {
        Self {
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters: schema::<P>().into(),
            },
            workspaces,
        }
    }

    /// The workspace of the run's agent.
    pub fn workspace(&self, ctx: &RunContext) -> Result<Arc<Workspace>, ToolError> {
        Ok(self.workspaces.for_agent(&ctx.agent_id)?)
    }
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
    /// Run one call (`call_id`) with validated parameters.
    async fn invoke(
        &self,
        call_id: &str,
        params: Value,
        ctx: &RunContext,
    ) -> Result<Value, ToolError>;
    /// An approval the call needs first, if any.
    fn approval(&self, _params: &Value) -> Option<ApprovalRequest> {
        None
    }
}

/// A tool working on the run's workspace.
#[async_trait]
pub(crate) trait WorkspaceTool: Send + Sync {
    /// Its parameters; the spec's schema is derived from them.
    type Params: DeserializeOwned + Send;
    /// Its spec and workspaces.
    fn base(&self) -> &Base;
    /// Run one call in `ws`.
    async fn run(&self, params: Self::Params, ws: Arc<Workspace>) -> Result<Value, ToolError>;
}

#[async_trait]
impl<T: WorkspaceTool> HostTool for T {
    fn spec(&self) -> &ToolSpec {
        &self.base().spec
    }
    async fn invoke(&self, _: &str, params: Value, ctx: &RunContext) -> Result<Value, ToolError> {
        let params = parse(params)?;
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
        call_id: &str,
        params: clawhost_tools::SharedJson,
        ctx: &RunContext,
    ) -> Result<Value, ToolError> {
        self.0.invoke(call_id, params.into_value(), ctx).await
    }
    fn approval(&self, params: &Value) -> Option<ApprovalRequest> {
        self.0.approval(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived schemas keep what the hand-written ones said: required
    /// fields, no others, bounds, and the descriptions.
    #[test]
    fn derived_schemas_keep_their_constraints() {
        let read = schema::<crate::files::ReadParams>();
        assert_eq!(read["type"], "object");
        assert_eq!(read["required"], serde_json::json!(["path"]));
        assert_eq!(read["additionalProperties"], false);
        assert_eq!(read["properties"]["offset"]["minimum"], 1);
        assert_eq!(
            read["properties"]["path"]["description"],
            "File path, relative to the workspace"
        );
        let validator = jsonschema_ok(&read);
        assert!(validator(serde_json::json!({"path": "a", "offset": 2})));
        assert!(!validator(serde_json::json!({"path": "a", "offset": 0})));
        assert!(!validator(serde_json::json!({"path": "a", "extra": 1})));
        assert!(!validator(serde_json::json!({"offset": 2})));
        let process = jsonschema_ok(&schema::<crate::exec::ProcessParams>());
        assert!(process(serde_json::json!({"action": "poll", "id": "p1"})));
        assert!(!process(serde_json::json!({"action": "stop"})));
        assert!(
            parse::<crate::exec::ProcessParams>(serde_json::json!({"action": "stop"})).is_err()
        );
    }

    fn jsonschema_ok(schema: &Value) -> impl Fn(Value) -> bool {
        let validator = jsonschema::validator_for(schema).unwrap();
        move |v| validator.is_valid(&v)
    }
}
