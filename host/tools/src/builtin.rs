//! Tools built into the host. They go through the same dispatch path as plugin tools.

use async_trait::async_trait;
use clawhost_agent_core::{RunContext, ToolError, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{Tool, ToolOrigin};

/// `echo`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoParams {
    /// The text to return
    text: String,
}

/// `echo`: returns its `text` parameter. Useful to check policy and hooks on host tools.
pub struct EchoTool {
    spec: ToolSpec,
}

impl Default for EchoTool {
    fn default() -> Self {
        Self {
            spec: ToolSpec {
                name: "echo".into(),
                description: "Return the given text unchanged.".into(),
                parameters: schemars::schema_for!(EchoParams).to_value().into(),
            },
        }
    }
}

impl EchoTool {
    /// The same tool under another name.
    pub fn named(name: &str) -> Self {
        let mut tool = Self::default();
        tool.spec.name = name.into();
        tool
    }
}

#[async_trait]
impl Tool for EchoTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Host
    }
    async fn call(
        &self,
        _call_id: &str,
        params: clawhost_hooks::SharedJson,
        _ctx: &RunContext,
    ) -> Result<Value, ToolError> {
        let p: EchoParams = serde_json::from_value(params.into_value())
            .map_err(|e| ToolError::invalid(e.to_string()))?;
        Ok(json!({ "text": p.text }))
    }
}
