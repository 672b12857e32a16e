//! The `agents` section: defaults and the list of configured agents.

use serde::Deserialize;

/// The `agents` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefaults {
    /// Default model ref (`provider/model`).
    #[serde(default = "default_model")]
    pub model: String,
    /// Upper bound of model calls in one turn.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: u32,
    /// What the built-in loop does with an answer cut off at the model's
    /// output token limit.
    #[serde(default)]
    pub on_max_tokens: OnMaxTokens,
    /// Upper bound of tool calls in one turn (built-in loop and harnesses).
    #[serde(default = "default_max_tool_calls")]
    pub max_tool_calls_per_turn: u32,
    /// Upper bound of tool-result text in one turn, in KiB.
    #[serde(default = "default_max_tool_result_kb")]
    pub max_tool_result_kb_per_turn: u64,
    /// System prompt.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Harness policy for every agent.
    #[serde(default)]
    pub embedded_harness: Option<crate::HarnessPolicy>,
    /// When and how to compact long sessions.
    #[serde(default)]
    pub compaction: CompactionConfig,
    /// In-memory pruning of old tool results.
    #[serde(default)]
    pub pruning: PruningConfig,
    /// The directory the built-in file and process tools work in (relative
    /// to the config file); unset: the directory the host was started in.
    #[serde(default)]
    pub workspace: Option<std::path::PathBuf>,
}

/// Compaction settings.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionConfig {
    /// Compact when the context comes within this many tokens of the window.
    #[serde(default = "default_reserve")]
    pub reserve_tokens: u64,
    /// Tokens of recent messages kept verbatim.
    #[serde(default = "default_keep_recent")]
    pub keep_recent_tokens: u64,
    /// Compact-and-retry rounds after a context-overflow error.
    #[serde(default = "default_overflow_retries")]
    pub max_overflow_retries: u32,
}

fn default_reserve() -> u64 {
    16_384
}
fn default_keep_recent() -> u64 {
    20_000
}
fn default_overflow_retries() -> u32 {
    2
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            reserve_tokens: default_reserve(),
            keep_recent_tokens: default_keep_recent(),
            max_overflow_retries: default_overflow_retries(),
        }
    }
}

/// Pruning settings (the transcript is never changed).
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PruningConfig {
    /// Tool results longer than this many characters are trimmed.
    #[serde(default = "default_max_result")]
    pub max_tool_result_chars: usize,
    /// Characters kept from the start.
    #[serde(default = "default_head")]
    pub head_chars: usize,
    /// Characters kept from the end.
    #[serde(default = "default_tail")]
    pub tail_chars: usize,
    /// The latest assistant turns whose tool results are never trimmed.
    #[serde(default = "default_protect")]
    pub protect_recent_assistant_turns: usize,
}

fn default_max_result() -> usize {
    8_000
}
fn default_head() -> usize {
    2_000
}
fn default_tail() -> usize {
    1_000
}
fn default_protect() -> usize {
    3
}

impl Default for PruningConfig {
    fn default() -> Self {
        Self {
            max_tool_result_chars: default_max_result(),
            head_chars: default_head(),
            tail_chars: default_tail(),
            protect_recent_assistant_turns: default_protect(),
        }
    }
}

fn default_max_tool_calls() -> u32 {
    64
}
fn default_max_tool_result_kb() -> u64 {
    4096
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
            on_max_tokens: OnMaxTokens::default(),
            max_tool_calls_per_turn: default_max_tool_calls(),
            max_tool_result_kb_per_turn: default_max_tool_result_kb(),
            system_prompt: None,
            embedded_harness: None,
            compaction: CompactionConfig::default(),
            pruning: PruningConfig::default(),
            workspace: None,
        }
    }
}

/// `agents.defaults.onMaxTokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnMaxTokens {
    /// Keep the cut-off answer and mark it cut off (run events, CLI, the
    /// transcript's `turn_stopped` entry, the gateway's `length`).
    #[default]
    Report,
    /// Ask the model to continue where it stopped, within `maxIterations`,
    /// and join the parts into one answer.
    Continue,
}

/// One configured agent.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
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
    /// Workspace, overriding the default.
    #[serde(default)]
    pub workspace: Option<std::path::PathBuf>,
    /// Tool policy of this agent, over the `tools` section's.
    #[serde(default)]
    pub tools: Option<AgentToolsConfig>,
}

/// An agent's tool policy: its `profile` and `allow` replace the `tools`
/// section's when set; its `deny` adds to theirs (a global denial stands).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentToolsConfig {
    /// Built-in tools offered to this agent.
    #[serde(default)]
    pub profile: Option<crate::ToolProfile>,
    /// When set, only these tools may run for this agent.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// More tools this agent may not run.
    #[serde(default)]
    pub deny: Vec<String>,
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

    /// The model refs the agents use (the default's and each entry's).
    pub fn model_refs(&self) -> Vec<String> {
        let mut refs = vec![self.defaults.model.clone()];
        refs.extend(self.list.iter().filter_map(|a| a.model.clone()));
        refs
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
