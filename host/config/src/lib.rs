//! The clawhost configuration file (`clawhost.json`): typed sections, parsed
//! with clear errors. Unknown keys are rejected so typos do not pass silently.

mod plugins;
mod tools;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use plugins::{
    Access, EnvGrant, FsGrant, PluginEntry, PluginGrants, PluginLimits, PluginsConfig,
};
pub use tools::ToolsConfig;

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
        /// What serde found wrong, with line and column.
        source: serde_json::Error,
    },
}

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Plugin loading, allowlist, grants and limits.
    #[serde(default)]
    pub plugins: PluginsConfig,
    /// Tool policy.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// Agent loop settings.
    #[serde(default)]
    pub agent: AgentConfig,
    /// Directory relative paths in this config resolve against (the file's directory).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Agent loop settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentConfig {
    /// Upper bound of model calls in one turn.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: u32,
}

fn default_max_iterations() -> u32 {
    8
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: default_max_iterations(),
        }
    }
}

impl Config {
    /// Parse configuration text; relative paths resolve against `base_dir`.
    pub fn from_json_str(text: &str, base_dir: &Path) -> Result<Self, serde_json::Error> {
        let mut config: Config = serde_json::from_str(text)?;
        config.base_dir = base_dir.to_path_buf();
        Ok(config)
    }

    /// Read and parse a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Self::from_json_str(&text, &base).map_err(|source| ConfigError::Parse {
            path: path.to_path_buf(),
            source,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

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
          "agent": { "maxIterations": 3 }
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
        assert_eq!(c.agent.max_iterations, 3);
        assert_eq!(c.tools.deny, vec!["exec".to_string()]);
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_name() {
        let err =
            Config::from_json_str(r#"{"plugins":{"alow":["a"]}}"#, Path::new(".")).unwrap_err();
        assert!(err.to_string().contains("alow"), "{err}");
    }
}
