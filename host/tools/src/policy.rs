//! Tool policy: which tools may run at all, set by the operator.

use std::collections::HashMap;

use clawhost_config::{AgentsConfig, ToolProfile, ToolsConfig};

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

/// Groups of built-in host tools usable in `tools.allow` / `tools.deny`.
pub const GROUPS: [(&str, &[&str]); 3] = [
    (
        "group:fs",
        &["read", "write", "edit", "apply_patch", "ls", "find", "grep"],
    ),
    ("group:runtime", &["exec", "process"]),
    ("group:web", &["web_fetch"]),
];

/// Every MCP server's tools, in `tools.allow` / `tools.deny`.
pub const MCP_GROUP: &str = "group:mcp";

/// The built-in tools of a group (`None`: no such group).
pub fn group(name: &str) -> Option<&'static [&'static str]> {
    GROUPS
        .iter()
        .find(|(g, _)| *g == name)
        .map(|(_, tools)| *tools)
}

/// Allow/deny lists over tool names, `plugin:<id>`, `mcp:<server>`,
/// `group:<name>` and `group:mcp`, under
/// a profile of built-in tools; deny wins. Agents may have their own.
#[derive(Debug, Clone, Default)]
pub struct ToolPolicy {
    profile: Option<ToolProfile>,
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    /// Agents with a policy of their own (`agents.list[].tools`), merged.
    agents: HashMap<String, ToolPolicy>,
}

impl ToolPolicy {
    /// Policy from the `tools` config section.
    pub fn from_config(config: &ToolsConfig) -> Self {
        Self {
            profile: config.profile,
            allow: config.allow.clone(),
            deny: config.deny.clone(),
            agents: HashMap::new(),
        }
    }

    /// The same policy, with each agent's `tools` over it: the agent's
    /// profile and allow list replace these when set, its deny list adds.
    pub fn with_agents(mut self, agents: &AgentsConfig) -> Self {
        for agent in &agents.list {
            let Some(own) = &agent.tools else { continue };
            let mut deny = self.deny.clone();
            deny.extend(own.deny.iter().cloned());
            let policy = ToolPolicy {
                profile: own.profile.or(self.profile),
                allow: own.allow.clone().or_else(|| self.allow.clone()),
                deny,
                agents: HashMap::new(),
            };
            self.agents.insert(agent.id.clone(), policy);
        }
        self
    }

    /// The policy in force for `agent_id`.
    pub fn for_agent(&self, agent_id: &str) -> &ToolPolicy {
        self.agents.get(agent_id).unwrap_or(self)
    }

    fn matches(entry: &str, tool: &str, origin: &ToolOrigin) -> bool {
        if entry == MCP_GROUP {
            return matches!(origin, ToolOrigin::Mcp(_));
        }
        if let Some(members) = group(entry) {
            return *origin == ToolOrigin::Host && members.contains(&tool);
        }
        if let Some(id) = entry.strip_prefix("plugin:") {
            return matches!(origin, ToolOrigin::Plugin(owner) if owner == id);
        }
        if let Some(server) = entry.strip_prefix("mcp:") {
            return matches!(origin, ToolOrigin::Mcp(name) if name == server);
        }
        entry.eq_ignore_ascii_case(tool)
    }

    /// Whether the profile offers a built-in tool (plugin and MCP tools are
    /// not subject to profiles).
    fn in_profile(&self, tool: &str, origin: &ToolOrigin) -> bool {
        let groups: &[&str] = match (self.profile, origin) {
            (_, ToolOrigin::Plugin(_) | ToolOrigin::Mcp(_))
            | (None | Some(ToolProfile::Full), _) => return true,
            (Some(ToolProfile::Minimal), _) => &[],
            (Some(ToolProfile::Coding), _) => &["group:fs", "group:runtime"],
            (Some(ToolProfile::Messaging), _) => &["group:web"],
        };
        groups
            .iter()
            .any(|g| group(g).is_some_and(|members| members.contains(&tool)))
    }

    /// Check one tool.
    pub fn check(&self, tool: &str, origin: &ToolOrigin) -> Result<(), PolicyDenial> {
        if !self.in_profile(tool, origin) {
            return Err(PolicyDenial {
                tool: tool.into(),
                rule: format!(
                    "tools.profile is {:?}, which does not include it",
                    self.profile.unwrap_or(ToolProfile::Full)
                )
                .to_lowercase(),
            });
        }
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

    #[test]
    fn profiles_and_groups_select_built_in_tools() {
        let host = ToolOrigin::Host;
        let with = |profile: ToolProfile, allow: Option<&[&str]>, deny: &[&str]| {
            ToolPolicy::from_config(&ToolsConfig {
                profile: Some(profile),
                allow: allow.map(|a| a.iter().map(|s| s.to_string()).collect()),
                deny: deny.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
        };
        let coding = with(ToolProfile::Coding, None, &[]);
        assert!(coding.check("read", &host).is_ok() && coding.check("exec", &host).is_ok());
        let err = coding.check("web_fetch", &host).unwrap_err();
        assert!(err.rule.contains("tools.profile is coding"), "{err}");
        // Plugin tools are not subject to profiles, and a group holds only
        // built-in tools.
        let minimal = with(ToolProfile::Minimal, None, &[]);
        assert!(minimal.check("read", &host).is_err());
        assert!(minimal.check("read", &plugin("p")).is_ok());
        let no_runtime = with(ToolProfile::Full, None, &["group:runtime"]);
        assert!(no_runtime.check("exec", &host).is_err());
        assert!(no_runtime.check("process", &host).is_err());
        assert!(no_runtime.check("exec", &plugin("p")).is_ok());
        let web_only = with(ToolProfile::Full, Some(&["group:web"]), &[]);
        assert!(web_only.check("web_fetch", &host).is_ok());
        assert!(web_only.check("write", &host).is_err());
        let messaging = with(ToolProfile::Messaging, None, &[]);
        assert!(messaging.check("web_fetch", &host).is_ok());
        assert!(messaging.check("write", &host).is_err());
    }

    #[test]
    fn mcp_entries_name_a_server_or_every_one_and_profiles_leave_them_alone() {
        let files = ToolOrigin::Mcp("files".into());
        let web = ToolOrigin::Mcp("web".into());
        let pol = policy(None, &["mcp:files"]);
        assert!(pol.check("mcp__files__read", &files).is_err());
        assert!(pol.check("mcp__web__get", &web).is_ok());
        // `plugin:files` is another owner, and a host tool is no server's.
        assert!(policy(None, &["plugin:files"])
            .check("mcp__files__read", &files)
            .is_ok());
        assert!(policy(None, &["mcp:files"])
            .check("read", &ToolOrigin::Host)
            .is_ok());
        let none = policy(None, &[MCP_GROUP]);
        assert!(none.check("mcp__web__get", &web).is_err());
        assert!(none.check("read", &ToolOrigin::Host).is_ok());
        assert!(none.check("x", &plugin("p")).is_ok());
        let only = policy(Some(&["mcp:web"]), &[]);
        assert!(only.check("mcp__web__get", &web).is_ok());
        assert!(only.check("mcp__files__read", &files).is_err());
        let minimal = ToolPolicy::from_config(&ToolsConfig {
            profile: Some(ToolProfile::Minimal),
            ..Default::default()
        });
        assert!(minimal.check("mcp__web__get", &web).is_ok());
    }

    #[test]
    fn an_agent_policy_replaces_profile_and_allow_and_adds_to_deny() {
        let agents: AgentsConfig = serde_json::from_value(serde_json::json!({"list": [
            {"id": "coder", "tools": {"profile": "coding", "deny": ["exec"]}},
            {"id": "reader", "tools": {"allow": ["read", "plugin:p"]}},
            {"id": "plain"}
        ]}))
        .unwrap();
        let global = ToolPolicy::from_config(&ToolsConfig {
            profile: Some(ToolProfile::Messaging),
            deny: vec!["grep".into()],
            ..Default::default()
        })
        .with_agents(&agents);
        let host = ToolOrigin::Host;
        assert!(global.for_agent("plain").check("read", &host).is_err());
        assert!(global.for_agent("plain").check("web_fetch", &host).is_ok());
        let coder = global.for_agent("coder");
        assert!(coder.check("read", &host).is_ok());
        assert!(coder.check("exec", &host).is_err());
        assert!(coder
            .check("grep", &host)
            .unwrap_err()
            .rule
            .contains("tools.deny"));
        assert!(coder.check("web_fetch", &host).is_err());
        let reader = global.for_agent("reader");
        assert!(
            reader.check("read", &host).is_err(),
            "messaging has no read"
        );
        assert!(reader.check("x", &plugin("p")).is_ok());
        assert!(reader.check("x", &plugin("q")).is_err());
    }

    fn plugin(id: &str) -> ToolOrigin {
        ToolOrigin::Plugin(id.into())
    }
}
