//! The clawhost configuration file (`clawhost.json`): typed sections, parsed
//! with clear errors. Unknown keys are rejected so typos do not pass silently.

mod agents;
mod approvals;
mod check;
pub mod edit;
mod env_vars;
mod gateway;
mod hook_table;
mod hooks;
mod json_text;
mod locate;
mod mcp;
mod models;
mod plugins;
mod provider_catalog;
mod runtime;
mod tools;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use agents::{
    AgentDefaults, AgentEntry, AgentSettings, AgentToolsConfig, AgentsConfig, CompactionConfig,
    OnMaxTokens, PruningConfig,
};
pub use approvals::{ApprovalsConfig, NonInteractivePolicy, MAX_APPROVAL_TIMEOUT_MS};
pub use check::CheckError;
pub use gateway::{GatewayAuth, GatewayConfig, GatewayLimits};
pub use hook_table::{HookGate, HookKind, HookMode};
pub use hooks::{FailPolicy, HookSettings, PluginHooks, MAX_HOOK_TIMEOUT_MS};
pub use locate::{locate, locate_or_new, xdg_dir, NotFound};
pub use mcp::{McpConfig, McpServerConfig, MAX_SERVER_NAME};
pub use models::{ApiKind, ModelConfig, ModelsConfig, ProviderConfig, RetryConfig};
pub use plugins::{
    Access, EnvGrant, FsGrant, PluginEntry, PluginGrants, PluginLimits, PluginSlots, PluginsConfig,
    ProcessGrant, RegistryLogin, TrustedKeyConfig,
};
pub use provider_catalog::{builtin_provider, BUILTIN_PROVIDERS};
pub use runtime::{HarnessPolicy, RuntimePolicy};
pub use tools::{ExecConfig, ToolProfile, ToolsConfig, WebConfig};

/// Errors reading a configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid configuration.
    #[error("invalid config file {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, at which key.
        source: ParseError,
    },
    /// A value parses but cannot be used (a missing directory, an unknown hook…).
    #[error("invalid config file {path}: `{key}`: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key, as a dotted path (e.g. `plugins.paths[0]`).
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// A syntax or type error in configuration text, with the key it is at.
#[derive(Debug, thiserror::Error)]
#[error("{}{reason}", key_prefix(.key))]
pub struct ParseError {
    /// The key, as a dotted path (e.g. `plugins.limits.memoryMb`); empty at the top level.
    pub key: String,
    /// What is wrong (a syntax error with its line and column).
    pub reason: String,
}

impl ParseError {
    /// `reason` at the key `path` (segments; an index segment is `[i]`).
    pub(crate) fn at(path: &[String], reason: impl Into<String>) -> Self {
        Self {
            key: path.join(".").replace(".[", "["),
            reason: reason.into(),
        }
    }
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("at `{key}`: ")
    }
}

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// The JSON Schema this file follows (`clawhost config schema`), for
    /// editors; the host ignores it.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// Plugin loading, allowlist, grants and limits.
    #[serde(default)]
    pub plugins: PluginsConfig,
    /// Tool policy.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// Model providers.
    #[serde(default)]
    pub models: ModelsConfig,
    /// Agents and their defaults.
    #[serde(default)]
    pub agents: AgentsConfig,
    /// Session storage.
    #[serde(default)]
    pub sessions: SessionsConfig,
    /// Resource packages.
    #[serde(default)]
    pub resources: ResourcesConfig,
    /// How approval requests are answered without an operator, and how long one has.
    #[serde(default)]
    pub approvals: ApprovalsConfig,
    /// `clawhost gateway`: where it listens and the token it asks for.
    #[serde(default)]
    pub gateway: GatewayConfig,
    /// MCP servers whose tools the agent may call.
    #[serde(default)]
    pub mcp: McpConfig,
    /// Directory relative paths in this config resolve against (the file's directory).
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file this config was loaded from, if any (no plugin may be granted it).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// Resource packages to load (directories with an optional `package.json`).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourcesConfig {
    /// Package directories (relative to the config file).
    #[serde(default)]
    pub packages: Vec<PathBuf>,
}

/// Session storage settings.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsConfig {
    /// Where transcripts live (default: `.clawhost/sessions` next to the config file).
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// fsync a session's transcript at the end of each turn (default true).
    /// Off, a process crash still loses nothing; a power loss may lose the
    /// last turns.
    #[serde(default = "yes")]
    pub fsync: bool,
    /// Keep sessions in a PostgreSQL database shared by gateway replicas
    /// instead of files: `"postgres://user:${PGPASSWORD}@host:5432/db"`.
    /// Unset: the files under `dir`.
    #[serde(default)]
    pub store: Option<String>,
    /// Most connections a process opens to `store` (default 16).
    #[serde(default = "default_pool")]
    pub pool: usize,
}

fn default_pool() -> usize {
    16
}

impl Default for SessionsConfig {
    fn default() -> Self {
        Self {
            dir: None,
            fsync: true,
            store: None,
            pool: default_pool(),
        }
    }
}

fn yes() -> bool {
    true
}

impl Config {
    /// The session store directory: `sessions.dir`, else for the user's own
    /// config (in `$XDG_CONFIG_HOME/clawhost`) `$XDG_STATE_HOME/clawhost/sessions`
    /// (`~/.local/state/clawhost/sessions`), else `.clawhost/sessions` beside
    /// the config (a project's config keeps its sessions with the project).
    pub fn sessions_dir(&self) -> PathBuf {
        match &self.sessions.dir {
            Some(dir) => self.resolve(dir),
            None => self
                .is_user_config()
                .then(|| locate::xdg_dir("XDG_STATE_HOME", ".local/state"))
                .flatten()
                .map(|state| state.join("sessions"))
                .unwrap_or_else(|| self.base_dir.join(".clawhost").join("sessions")),
        }
    }

    /// Where sessions of the user's own config were kept before they moved
    /// to [`Config::sessions_dir`] (`.clawhost/sessions` beside it), if that
    /// is elsewhere now.
    pub fn legacy_sessions_dir(&self) -> Option<PathBuf> {
        let old = self.base_dir.join(".clawhost").join("sessions");
        (self.sessions.dir.is_none() && self.sessions_dir() != old).then_some(old)
    }

    /// Whether this config was loaded from the user's config directory.
    fn is_user_config(&self) -> bool {
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        self.source.is_some()
            && locate::xdg_dir("XDG_CONFIG_HOME", ".config")
                .and_then(|d| canonical(&d))
                .is_some_and(|user| canonical(&self.base_dir).as_ref() == Some(&user))
    }

    /// Parse configuration text, JSON or JSON5 (comments, trailing commas,
    /// unquoted keys, single quotes), expanding `${VAR}` from the environment; relative
    /// paths resolve against `base_dir`. Errors name the key they are at.
    pub fn from_json_str(text: &str, base_dir: &Path) -> Result<Self, ParseError> {
        Self::from_text_with_env(text, base_dir, &|name| std::env::var(name).ok())
    }

    /// [`Config::from_json_str`] with `lookup` as the environment.
    pub fn from_text_with_env(
        text: &str,
        base_dir: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ParseError> {
        let err = |key: String, reason: String| ParseError {
            key: key.replace(".[", "["),
            reason,
        };
        let mut value = json_text::read(text)?;
        // serde would take an array as the struct's fields in order.
        if value.is_array() {
            return Err(err(
                String::new(),
                "the configuration must be a JSON object, not an array".into(),
            ));
        }
        env_vars::expand(&mut value, lookup)?;
        provider_catalog::complete(&mut value, lookup);
        let mut config: Config = serde_path_to_error::deserialize(value).map_err(|e| {
            let key = match e.path().to_string() {
                top if top == "." => String::new(),
                key => key,
            };
            err(key, e.into_inner().to_string())
        })?;
        config.base_dir = base_dir.to_path_buf();
        Ok(config)
    }

    /// Read, parse and [check](Config::check) a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut config =
            Self::from_json_str(&text, &base).map_err(|source| ConfigError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
        config.source = Some(path.to_path_buf());
        config.check().map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: e.key,
            reason: e.reason,
        })?;
        Ok(config)
    }

    /// The JSON Schema (draft 2020-12) of the configuration file, generated
    /// from these types. A provider's `api` is required only for an id that
    /// is not in the built-in catalog, which the schema cannot say, so it is
    /// left optional there.
    pub fn json_schema() -> serde_json::Value {
        let mut schema = schemars::schema_for!(Config).to_value();
        if let Some(provider) = schema.pointer_mut("/$defs/ProviderConfig") {
            if let Some(map) = provider.as_object_mut() {
                map.remove("required");
            }
        }
        schema
    }

    /// Resolve a path from this config against its base directory.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base_dir.join(path)
        }
    }
}

/// Read one JSON or JSON5 value (as the config file is read: comments,
/// trailing commas, unquoted keys, single quotes; a repeated key refused);
/// `None` when `text` is not one.
pub fn read_json5_value(text: &str) -> Option<serde_json::Value> {
    json_text::read(text).ok()
}

#[cfg(test)]
mod bad_input_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_accepts_real_configs_and_names_a_misspelt_key() {
        let schema = Config::json_schema();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let good = serde_json::json!({
            "$schema": "./clawhost.schema.json",
            "plugins": {"paths": ["./p"], "entries": {"g": {
                "required": true, "grants": {"toolResults": true},
                "hooks": {"timeoutMs": 500, "before_tool_call": {"priority": 5, "failPolicy": "block"}}
            }}},
            "models": {"providers": {"openai": {"apiKey": "${OPENAI_API_KEY}"}}},
            "agents": {"defaults": {"model": "openai/gpt-4.1"}, "list": [{"id": "ops"}]},
            "tools": {"profile": "coding", "testFixtures": true},
            "gateway": {"auth": {"token": "${T}"}}
        });
        let errors: Vec<_> = validator
            .iter_errors(&good)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        Config::from_text_with_env(&good.to_string(), Path::new("/"), &|_| Some("x".into()))
            .unwrap();
        let bad = serde_json::json!({"plugins": {"limits": {"memoryMB": 64}}});
        assert!(!validator.is_valid(&bad));
        let bad = serde_json::json!({"tools": {"profile": "everything"}});
        assert!(!validator.is_valid(&bad));
    }

    #[test]
    fn parses_a_full_plugins_section() {
        let text = r#"{
          "plugins": {
            "paths": ["plugins"],
            "allow": ["a", "b"], "deny": ["b"],
            "limits": { "memoryMb": 32, "callTimeoutMs": 100, "maxConsecutiveTraps": 2 },
            "entries": { "a": {
              "sha256": "00ff",
              "config": { "k": 1 },
              "grants": {
                "filesystem": [{ "guestPath": "/d", "hostPath": "data", "access": "read-only" }],
                "env": ["HOME", { "name": "X", "value": "1" }]
              }
            } }
          },
          "tools": { "deny": ["exec"] },
          "agents": { "defaults": { "maxIterations": 3 }, "list": [{ "id": "ops", "model": "openai/gpt-x" }] },
          "models": { "providers": { "openai": {
            "baseUrl": "https://api.openai.com/v1", "api": "openai-responses", "apiKeyEnv": "OPENAI_API_KEY",
            "models": [{ "id": "gpt-x", "contextWindow": 1000, "params": { "service_tier": "flex" } }],
            "agentRuntime": { "id": "codex" }
          } } }
        }"#;
        let c = Config::from_json_str(text, Path::new("/etc/claw")).unwrap();
        assert_eq!(
            c.plugins.allow.as_deref(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert_eq!(c.plugins.limits.memory_mb, 32);
        let a = &c.plugins.entries["a"];
        assert_eq!(a.grants.filesystem[0].access, Access::ReadOnly);
        assert_eq!(a.grants.env.len(), 2);
        assert_eq!(c.resolve(Path::new("data")), Path::new("/etc/claw/data"));
        let ops = c.agents.settings("ops").unwrap();
        assert_eq!(
            (ops.model.as_str(), ops.max_iterations),
            ("openai/gpt-x", 3)
        );
        assert!(c.agents.settings("main").is_none());
        let openai = &c.models.providers["openai"];
        assert_eq!(openai.api, ApiKind::OpenaiResponses);
        assert_eq!(openai.models[0].params["service_tier"], "flex");
        assert_eq!(openai.retry.max_attempts, 4);
        assert_eq!(c.tools.deny, vec!["exec".to_string()]);
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_name() {
        let err =
            Config::from_json_str(r#"{"plugins":{"alow":["a"]}}"#, Path::new(".")).unwrap_err();
        assert!(err.to_string().contains("alow"), "{err}");
    }
}
