//! The `tools` section: which tools the agent may call at all.

use serde::Deserialize;

/// Tool policy: `deny` wins; when `allow` is set only listed tools may run.
/// Entries are tool names, or `plugin:<id>` for every tool of a plugin.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// When set, only these tools may run.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// These tools never run.
    #[serde(default)]
    pub deny: Vec<String>,
}
