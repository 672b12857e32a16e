//! The `tools` section: which tools the agent may call at all.

use serde::Deserialize;

/// Tool policy: `deny` wins; when `allow` is set only listed tools may run.
/// Entries are tool names (matched without regard to ASCII case), or
/// `plugin:<id>` for every tool of a plugin.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// When set, only these tools may run.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// These tools never run.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Longest tool description accepted, in characters (descriptions are
    /// sent with every model request); a longer one refuses its plugin.
    #[serde(default = "default_max_description")]
    pub max_description_chars: usize,
    /// Largest parameter schema accepted, in KiB of JSON.
    #[serde(default = "default_max_schema_kb")]
    pub max_schema_kb: usize,
}

fn default_max_description() -> usize {
    4096
}
fn default_max_schema_kb() -> usize {
    32
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            allow: None,
            deny: Vec::new(),
            max_description_chars: default_max_description(),
            max_schema_kb: default_max_schema_kb(),
        }
    }
}
