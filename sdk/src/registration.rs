//! Builders for what a plugin registers.

use crate::wit;

/// A tool a plugin provides.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// Tool name.
    pub name: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the parameters.
    pub parameters: serde_json::Value,
}

impl ToolDef {
    /// A tool with a name, a description and a JSON Schema for its parameters.
    pub fn new(name: &str, description: &str, parameters: serde_json::Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// What a plugin provides.
#[derive(Debug, Clone)]
pub struct Registration {
    id: String,
    version: String,
    tools: Vec<ToolDef>,
    hooks: Vec<(wit::HookKind, i32)>,
    harnesses: Vec<String>,
}

impl Registration {
    /// A registration with the plugin's id (as in its manifest) and version.
    pub fn new(id: &str, version: &str) -> Self {
        Self {
            id: id.into(),
            version: version.into(),
            tools: Vec::new(),
            hooks: Vec::new(),
            harnesses: Vec::new(),
        }
    }

    /// Add a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }

    /// Subscribe to a hook with a priority (higher runs first).
    pub fn hook(mut self, hook: wit::HookKind, priority: i32) -> Self {
        self.hooks.push((hook, priority));
        self
    }

    /// Declare an agent runtime (harness) id this plugin provides.
    pub fn harness(mut self, id: &str) -> Self {
        self.harnesses.push(id.into());
        self
    }

    pub(crate) fn into_wit(self) -> wit::Registration {
        wit::Registration {
            id: self.id,
            version: self.version,
            tools: self
                .tools
                .into_iter()
                .map(|t| wit::ToolDef {
                    name: t.name,
                    description: t.description,
                    parameters: t.parameters.to_string(),
                })
                .collect(),
            hooks: self
                .hooks
                .into_iter()
                .map(|(hook, priority)| wit::HookSubscription { hook, priority })
                .collect(),
            harnesses: self.harnesses,
        }
    }
}
