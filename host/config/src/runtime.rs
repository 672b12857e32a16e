//! Runtime (harness) policy as written in config, at its several scopes.

use serde::Deserialize;

/// `agentRuntime` at model or provider scope.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimePolicy {
    /// Runtime id: `auto`, `default`, `openclaw` (alias `pi`), or a plugin harness id.
    #[serde(default)]
    pub id: Option<String>,
    /// What to do when the runtime is missing or does not support the route:
    /// `openclaw` / `pi` (use the built-in) or `none` (fail).
    #[serde(default)]
    pub fallback: Option<String>,
}

/// `embeddedHarness` at agent (defaults or list entry) scope.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HarnessPolicy {
    /// Runtime id, as for [`RuntimePolicy::id`].
    #[serde(default)]
    pub runtime: Option<String>,
    /// Fallback, as for [`RuntimePolicy::fallback`].
    #[serde(default)]
    pub fallback: Option<String>,
}
