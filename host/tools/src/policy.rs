//! Tool policy: which tools may run at all, set by the operator.

use clawhost_config::ToolsConfig;

use crate::ToolOrigin;

/// Why policy refused a tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}` is not allowed by tool policy ({rule})")]
pub struct PolicyDenial {
    /// The tool.
    pub tool: String,
    /// The rule that refused it, e.g. `tools.deny contains "exec"`.
    pub rule: String,
}

/// Allow/deny lists over tool names and `plugin:<id>` groups; deny wins.
#[derive(Debug, Clone, Default)]
pub struct ToolPolicy {
    allow: Option<Vec<String>>,
    deny: Vec<String>,
}

impl ToolPolicy {
    /// Policy from the `tools` config section.
    pub fn from_config(config: &ToolsConfig) -> Self {
        Self {
            allow: config.allow.clone(),
            deny: config.deny.clone(),
        }
    }

    fn matches(entry: &str, tool: &str, origin: &ToolOrigin) -> bool {
        match (entry.strip_prefix("plugin:"), origin) {
            (Some(id), ToolOrigin::Plugin(owner)) => id == owner,
            (Some(_), ToolOrigin::Host) => false,
            (None, _) => entry.eq_ignore_ascii_case(tool),
        }
    }

    /// Check one tool.
    pub fn check(&self, tool: &str, origin: &ToolOrigin) -> Result<(), PolicyDenial> {
        if let Some(entry) = self.deny.iter().find(|e| Self::matches(e, tool, origin)) {
            return Err(PolicyDenial {
                tool: tool.into(),
                rule: format!("tools.deny contains \"{entry}\""),
            });
        }
        match &self.allow {
            Some(allow) if !allow.iter().any(|e| Self::matches(e, tool, origin)) => {
                Err(PolicyDenial {
                    tool: tool.into(),
                    rule: "tools.allow is set and does not list it".into(),
                })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: Option<&[&str]>, deny: &[&str]) -> ToolPolicy {
        ToolPolicy::from_config(&ToolsConfig {
            allow: allow.map(|a| a.iter().map(|s| s.to_string()).collect()),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
    }

    #[test]
    fn deny_wins_and_allow_restricts() {
        let p = plugin("p");
        let pol = policy(Some(&["a", "plugin:p"]), &["b"]);
        assert!(pol.check("a", &ToolOrigin::Host).is_ok());
        assert!(pol.check("anything", &p).is_ok());
        assert!(pol
            .check("c", &ToolOrigin::Host)
            .unwrap_err()
            .rule
            .contains("tools.allow"));
        let pol = policy(Some(&["b"]), &["b"]);
        assert!(pol
            .check("b", &ToolOrigin::Host)
            .unwrap_err()
            .rule
            .contains("tools.deny"));
        let pol = policy(None, &["exec"]);
        assert!(pol.check("EXEC", &ToolOrigin::Host).is_err());
        assert!(pol.check("Exec", &p).is_err());
        let pol = policy(None, &["plugin:p"]);
        assert!(pol.check("x", &p).is_err());
        assert!(pol.check("x", &ToolOrigin::Host).is_ok());
    }

    fn plugin(id: &str) -> ToolOrigin {
        ToolOrigin::Plugin(id.into())
    }
}
