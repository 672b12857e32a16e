//! Per-plugin hook settings: the fail policy, deadline and priority of each
//! hook, and OpenClaw's per-plugin hook keys.

use std::collections::BTreeMap;

use serde::Deserialize;

/// What the host does when a hook handler traps, times out or answers wrongly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FailPolicy {
    /// Fail closed: the guarded action does not happen (a tool call is
    /// blocked, a result withheld, a turn ended with an error).
    Block,
    /// Fail open: the failure is logged and the handler skipped.
    Ignore,
}

/// Operator settings for one hook of one plugin.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookSettings {
    /// Fail policy for this hook (overrides the plugin's `failPolicy`).
    #[serde(default)]
    pub fail_policy: Option<FailPolicy>,
    /// Deadline of one call of this hook, in milliseconds (default: the
    /// plugin call deadline, `plugins.limits.callTimeoutMs`).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Priority of this plugin's handler (higher runs first), overriding the
    /// one the plugin registered: the operator decides the order of policy.
    #[serde(default)]
    pub priority: Option<i32>,
}

/// Longest hook deadline an operator may set, in milliseconds (OpenClaw's bound).
pub const MAX_HOOK_TIMEOUT_MS: u64 = 600_000;

/// `plugins.entries.<id>.hooks`: OpenClaw's per-plugin hook settings
/// (`timeoutMs`, `timeouts`, `allowConversationAccess`,
/// `allowPromptInjection`) beside clawhost's settings per hook name.
#[derive(Debug, Clone)]
pub struct PluginHooks {
    /// Deadline of every hook call of this plugin, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Deadline per hook name, in milliseconds (wins over `timeout_ms`);
    /// [`Config::check`](crate::Config) refuses unknown names.
    pub timeouts: BTreeMap<String, u64>,
    /// Deliver the hooks that see the conversation (`llm_input`,
    /// `llm_output`, `agent_end`) to this plugin. Off by default, as in OpenClaw.
    pub allow_conversation_access: bool,
    /// Deliver the prompt-mutating hook (`before_prompt_build`) to this
    /// plugin. On by default, as in OpenClaw.
    pub allow_prompt_injection: bool,
    /// Settings per hook name (fail policy, deadline, priority).
    pub per_hook: BTreeMap<String, HookSettings>,
}

impl Default for PluginHooks {
    fn default() -> Self {
        Self {
            timeout_ms: None,
            timeouts: BTreeMap::new(),
            allow_conversation_access: false,
            allow_prompt_injection: true,
            per_hook: BTreeMap::new(),
        }
    }
}

impl<'de> Deserialize<'de> for PluginHooks {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PluginHooks;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of hook settings")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<PluginHooks, A::Error> {
                let mut hooks = PluginHooks::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "timeoutMs" => hooks.timeout_ms = Some(map.next_value()?),
                        "timeouts" => hooks.timeouts = map.next_value()?,
                        "allowConversationAccess" => {
                            hooks.allow_conversation_access = map.next_value()?
                        }
                        "allowPromptInjection" => {
                            hooks.allow_prompt_injection = map.next_value()?
                        }
                        _ => {
                            let settings = map.next_value()?;
                            hooks.per_hook.insert(key, settings);
                        }
                    }
                }
                Ok(hooks)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl schemars::JsonSchema for PluginHooks {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PluginHooks".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let per_hook = generator.subschema_for::<HookSettings>();
        schemars::json_schema!({
            "description": "OpenClaw's per-plugin hook settings beside settings per hook name (`before_tool_call`: fail policy, deadline, priority).",
            "type": "object",
            "properties": {
                "timeoutMs": { "type": "integer", "minimum": 1, "maximum": MAX_HOOK_TIMEOUT_MS },
                "timeouts": {
                    "type": "object",
                    "additionalProperties": { "type": "integer", "minimum": 1, "maximum": MAX_HOOK_TIMEOUT_MS }
                },
                "allowConversationAccess": { "type": "boolean", "default": false },
                "allowPromptInjection": { "type": "boolean", "default": true }
            },
            "additionalProperties": per_hook
        })
    }
}
