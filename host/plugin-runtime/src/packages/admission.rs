//! Operator admission: allow/deny lists and sha256 pins, checked before any compilation.

use clawhost_config::{PluginEntry, PluginsConfig};
use sha2::{Digest, Sha256};

use crate::LoadError;

/// The operator's entry for plugin `id` in `config`, or the defaults when
/// there is none (borrowed either way).
pub(crate) fn entry<'a>(config: &'a PluginsConfig, id: &str) -> &'a PluginEntry {
    static UNLISTED: std::sync::LazyLock<PluginEntry> = std::sync::LazyLock::new(Default::default);
    config.entries.get(id).unwrap_or(&UNLISTED)
}

/// Check `plugins.deny` (wins) and `plugins.allow` for a plugin id.
pub fn check_lists(id: &str, config: &PluginsConfig) -> Result<(), LoadError> {
    if config.deny.iter().any(|d| d == id) {
        return Err(LoadError::Refused {
            id: id.into(),
            rule: format!("plugins.deny lists \"{id}\""),
        });
    }
    if let Some(allow) = &config.allow {
        if !allow.iter().any(|a| a == id) {
            return Err(LoadError::Refused {
                id: id.into(),
                rule: "plugins.allow is set and does not list it".into(),
            });
        }
    }
    Ok(())
}

/// Check the operator's config for a plugin against the manifest's
/// `configSchema` (an unset config is checked as `{}`), naming the offending
/// key as `plugins.entries.<id>.config.<path>`.
pub fn check_config(
    id: &str,
    schema: Option<&serde_json::Value>,
    config: &serde_json::Value,
) -> Result<(), LoadError> {
    let Some(schema) = schema else {
        return Ok(());
    };
    let base = format!("plugins.entries.{id}.config");
    let validator = jsonschema::validator_for(schema).map_err(|e| LoadError::Config {
        id: id.into(),
        key: "configSchema (in its manifest)".into(),
        reason: format!("not a valid JSON Schema: {e}"),
    })?;
    let empty = serde_json::Value::Object(Default::default());
    let config = if config.is_null() { &empty } else { config };
    let first = validator.iter_errors(config).next().map(|e| {
        let path: String = e
            .instance_path()
            .into_iter()
            .map(|segment| format!(".{segment}"))
            .collect();
        LoadError::Config {
            id: id.into(),
            key: format!("{base}{path}"),
            reason: clawhost_agent_core::text::clip(&e.to_string(), 300).into_owned(),
        }
    });
    match first {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

/// The sha256 of a component, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Check a component's bytes against `plugins.entries.<id>.sha256`, when set.
pub fn check_pin(id: &str, actual_hex: &str, config: &PluginsConfig) -> Result<(), LoadError> {
    match config.entries.get(id).and_then(|e| e.sha256.as_deref()) {
        Some(expected) if !expected.eq_ignore_ascii_case(actual_hex) => Err(LoadError::Refused {
            id: id.into(),
            rule: format!(
                "plugins.entries.{id}.sha256 pins {expected}, but the component's sha256 is {actual_hex}"
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allow: Option<&[&str]>, deny: &[&str]) -> PluginsConfig {
        PluginsConfig {
            allow: allow.map(|a| a.iter().map(|s| s.to_string()).collect()),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn deny_wins_over_allow_and_allow_is_exclusive() {
        let err = check_lists("x", &config(Some(&["x"]), &["x"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`x`") && err.contains("plugins.deny"), "{err}");
        let err = check_lists("y", &config(Some(&["x"]), &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`y`") && err.contains("plugins.allow"),
            "{err}"
        );
        assert!(check_lists("x", &config(Some(&["x"]), &[])).is_ok());
        assert!(check_lists("z", &config(None, &["x"])).is_ok());
    }

    #[test]
    fn a_pin_mismatch_is_refused() {
        let mut c = config(None, &[]);
        c.entries.insert(
            "p".into(),
            clawhost_config::PluginEntry {
                sha256: Some("AB".into()),
                ..Default::default()
            },
        );
        assert!(check_pin("p", "ab", &c).is_ok());
        let err = check_pin("p", "cd", &c).unwrap_err().to_string();
        assert!(err.contains("sha256") && err.contains("cd"), "{err}");
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
