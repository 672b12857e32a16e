//! The check of what a plugin declared at registration, whatever its API version.

use clawhost_agent_core::text::clip;
use clawhost_agent_core::ToolSpec;
use clawhost_hooks::{HookKind, ToolMatcher};

use crate::abi::Declared;

/// A registration checked and converted to host types.
#[derive(Debug, Clone)]
pub struct Registration {
    /// Plugin id (the manifest's).
    pub id: String,
    /// Plugin version (the manifest's).
    pub version: String,
    /// Tools, checked, with their compiled schemas.
    pub tools: Vec<clawhost_tools::CheckedTool>,
    /// Hook subscriptions with priority.
    pub hooks: Vec<(HookKind, i32)>,
    /// Tool hooks that receive only some tools' calls.
    pub tool_matchers: Vec<(HookKind, ToolMatcher)>,
    /// Harness ids.
    pub harnesses: Vec<String>,
}

impl Registration {
    /// The tools `kind` receives calls of, when the plugin narrowed them.
    pub fn tool_matcher(&self, kind: HookKind) -> Option<&ToolMatcher> {
        self.tool_matchers
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, m)| m)
    }
}

/// Most tools one plugin may declare.
pub const MAX_TOOLS: usize = 128;
/// Most tool patterns one hook subscription may carry.
pub const MAX_TOOL_PATTERNS: usize = 64;
/// Longest tool pattern, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest tool name and harness id, and the most of a plugin's text an
/// error quotes, in characters.
pub const MAX_ID_CHARS: usize = 64;

/// Reserved runtime ids a plugin harness may not take.
const RESERVED_HARNESS_IDS: &[&str] = &["openclaw", "pi", "auto", "default", "codex-app-server"];

/// Check what a plugin declared against its manifest and convert it.
/// `remembered`: the declaration is one this host checked in full before
/// (a verified record), so tool schemas compile at their first use.
pub(crate) fn check(
    manifest_id: &str,
    manifest_version: &str,
    d: Declared,
    exports_harness: bool,
    remembered: bool,
) -> Result<Registration, String> {
    if let Some(id) = d.id.as_deref().filter(|id| *id != manifest_id) {
        return Err(format!(
            "register() returned id `{}` but the manifest says `{manifest_id}`",
            clip(id, MAX_ID_CHARS)
        ));
    }
    if d.tools.len() > MAX_TOOLS {
        return Err(format!(
            "it declares {} tools; at most {MAX_TOOLS} are allowed",
            d.tools.len()
        ));
    }
    let mut tools = Vec::new();
    for t in d.tools {
        if t.name.chars().count() > MAX_ID_CHARS {
            return Err(format!(
                "tool name `{}` is longer than {MAX_ID_CHARS} characters",
                clip(&t.name, MAX_ID_CHARS)
            ));
        }
        let parameters: serde_json::Value = serde_json::from_str(&t.parameters)
            .map_err(|e| format!("tool `{}`: parameters is not valid JSON: {e}", t.name))?;
        let spec = ToolSpec {
            name: t.name,
            description: t.description,
            parameters: parameters.into(),
        };
        if tools
            .iter()
            .any(|t: &clawhost_tools::CheckedTool| t.spec.name == spec.name)
        {
            return Err(format!("tool `{}` is registered twice", spec.name));
        }
        let checked = if remembered {
            clawhost_tools::CheckedTool::remembered(spec)
        } else {
            clawhost_tools::CheckedTool::check(spec)
        };
        tools.push(checked.map_err(|e| e.to_string())?);
    }
    let mut hooks: Vec<(HookKind, i32)> = Vec::new();
    for (kind, priority) in d.hooks {
        if hooks.iter().any(|(k, _)| *k == kind) {
            return Err(format!("hook `{}` is subscribed twice", kind.name()));
        }
        hooks.push((kind, priority));
    }
    let mut tool_matchers = Vec::new();
    for (kind, patterns) in d.tool_filters {
        if patterns.len() > MAX_TOOL_PATTERNS {
            return Err(format!(
                "hook `{}` names {} tool patterns; at most {MAX_TOOL_PATTERNS} are allowed",
                kind.name(),
                patterns.len()
            ));
        }
        if let Some(p) = patterns.iter().find(|p| p.len() > MAX_NAME_BYTES) {
            return Err(format!(
                "hook `{}`: a tool pattern of {} bytes; at most {MAX_NAME_BYTES} are allowed",
                kind.name(),
                p.len()
            ));
        }
        if let Some(matcher) =
            ToolMatcher::new(&patterns).map_err(|e| format!("hook `{}`: {e}", kind.name()))?
        {
            tool_matchers.push((kind, matcher));
        }
    }
    match (exports_harness, d.harnesses.len()) {
        (false, 0) | (true, 1) => {}
        (false, _) => {
            return Err("it declares harnesses but does not export the harness interface".into())
        }
        (true, 0) => {
            return Err("it exports the harness interface but declares no harness id".into())
        }
        (true, _) => return Err("a plugin provides at most one harness".into()),
    }
    if exports_harness && (!tools.is_empty() || !hooks.is_empty()) {
        // Its tool or hook calls would re-enter the instance running the turn.
        return Err("a harness plugin may not also provide tools or hooks".into());
    }
    for h in &d.harnesses {
        let ok = !h.is_empty()
            && h.len() <= MAX_ID_CHARS
            && h.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !ok || RESERVED_HARNESS_IDS.contains(&h.as_str()) {
            return Err(format!(
                "harness id `{}` is invalid or reserved",
                clip(h, MAX_ID_CHARS)
            ));
        }
    }
    Ok(Registration {
        id: manifest_id.into(),
        version: manifest_version.into(),
        tools,
        hooks,
        tool_matchers,
        harnesses: d.harnesses,
    })
}
