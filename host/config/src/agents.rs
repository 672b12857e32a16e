//! The `agents` section: defaults and the list of configured agents.

use serde::Deserialize;

/// The `agents` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentsConfig {
    /// Settings every agent inherits.
    #[serde(default)]
    pub defaults: AgentDefaults,
    /// Configured agents (an agent `main` exists when the list is empty).
    #[serde(default)]
    pub list: Vec<AgentEntry>,
}

/// Settings every agent inherits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefaults {
    /// Default model ref (`provider/model`).
    #[serde(default = "default_model")]
    pub model: String,
    /// Upper bound of model calls in one turn.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: u32,
    /// System prompt.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Harness policy for every agent.
    #[serde(default)]
    pub embedded_harness: Option<crate::HarnessPolicy>,
}

fn default_model() -> String {
    "scripted/demo".into()
}
fn default_max_iterations() -> u32 {
    8
}

impl Default for AgentDefaults {
    fn default() -> Self {
        Self {
            model: default_model(),
            max_iterations: default_max_iterations(),
            system_prompt: None,
            embedded_harness: None,
        }
    }
}

/// One configured agent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentEntry {
    /// Agent id.
    pub id: String,
    /// Model ref, overriding the default.
    #[serde(default)]
    pub model: Option<String>,
    /// System prompt, overriding the default.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Harness policy, overriding the default.
    #[serde(default)]
    pub embedded_harness: Option<crate::HarnessPolicy>,
}

/// A resolved agent: defaults with the entry's overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// Agent id.
    pub id: String,
    /// Model ref.
    pub model: String,
    /// Max model calls per turn.
    pub max_iterations: u32,
    /// System prompt.
    pub system_prompt: Option<String>,
    /// Harness policy in force (the entry's, else the defaults').
    pub embedded_harness: Option<crate::HarnessPolicy>,
    /// Whether the harness policy came from the agent entry (not the defaults).
    pub harness_from_entry: bool,
}

impl AgentsConfig {
    /// Ids of the configured agents (`main` when none are listed).
    pub fn ids(&self) -> Vec<String> {
        if self.list.is_empty() {
            vec!["main".into()]
        } else {
            self.list.iter().map(|a| a.id.clone()).collect()
        }
    }

    /// Settings of one agent, or `None` if it is not configured.
    pub fn settings(&self, id: &str) -> Option<AgentSettings> {
        let d = &self.defaults;
        let entry = self.list.iter().find(|a| a.id == id);
        if entry.is_none() && !(self.list.is_empty() && id == "main") {
            return None;
        }
        let harness = entry.and_then(|e| e.embedded_harness.clone());
        Some(AgentSettings {
            id: id.into(),
            model: entry
                .and_then(|e| e.model.clone())
                .unwrap_or_else(|| d.model.clone()),
            max_iterations: d.max_iterations,
            system_prompt: entry
                .and_then(|e| e.system_prompt.clone())
                .or_else(|| d.system_prompt.clone()),
            harness_from_entry: harness.is_some(),
            embedded_harness: harness.or_else(|| d.embedded_harness.clone()),
        })
    }
}
