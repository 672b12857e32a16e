//! The tool registry: names, origins, and compiled parameter schemas.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{RunContext, ToolSpec};
use serde_json::Value;

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOrigin {
    /// Built into the host.
    Host,
    /// Provided by the plugin with this id.
    Plugin(String),
}

/// A callable tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and parameter schema.
    fn spec(&self) -> &ToolSpec;
    /// Who provides it.
    fn origin(&self) -> ToolOrigin;
    /// Run it with validated parameters; `Err` is a message the model sees.
    async fn call(&self, call_id: &str, params: Value, ctx: &RunContext) -> Result<Value, String>;
}

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two tools share a name.
    #[error("tool `{name}` from {new:?} clashes with the one from {existing:?}")]
    Duplicate {
        /// Tool name.
        name: String,
        /// Who registered it first.
        existing: ToolOrigin,
        /// Who tried again.
        new: ToolOrigin,
    },
    /// The name is not `[a-zA-Z0-9_-]{1,64}`.
    #[error("tool name `{0}` is invalid: use 1–64 characters of [a-zA-Z0-9_-]")]
    BadName(String),
    /// The parameter schema is not a valid JSON Schema object.
    #[error("tool `{name}` has an invalid parameter schema: {reason}")]
    BadSchema {
        /// Tool name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

pub(crate) struct Entry {
    pub tool: Arc<dyn Tool>,
    pub validator: jsonschema::Validator,
}

/// Registered tools by name, each with its compiled schema.
#[derive(Default)]
pub struct ToolRegistry {
    pub(crate) tools: BTreeMap<String, Entry>,
}

/// Check a tool name and compile its schema; shared by registration and plugin loading.
pub fn compile_schema(spec: &ToolSpec) -> Result<jsonschema::Validator, RegistryError> {
    let name_ok = !spec.name.is_empty()
        && spec.name.len() <= 64
        && spec
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err(RegistryError::BadName(spec.name.clone()));
    }
    if spec.parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(RegistryError::BadSchema {
            name: spec.name.clone(),
            reason: "the top level must be `\"type\": \"object\"`".into(),
        });
    }
    jsonschema::validator_for(&spec.parameters).map_err(|e| RegistryError::BadSchema {
        name: spec.name.clone(),
        reason: e.to_string(),
    })
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a tool; names are unique across host and plugins.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let spec = tool.spec();
        if let Some(existing) = self.tools.get(&spec.name) {
            return Err(RegistryError::Duplicate {
                name: spec.name.clone(),
                existing: existing.tool.origin(),
                new: tool.origin(),
            });
        }
        let validator = compile_schema(spec)?;
        self.tools
            .insert(spec.name.clone(), Entry { tool, validator });
        Ok(())
    }

    /// Specs of every tool, by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|e| e.tool.spec().clone()).collect()
    }

    /// Names of every tool.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }
}
