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

/// Why a plugin's declaration is refused.
#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    /// `register` returned another id than the manifest's.
    #[error("register() returned id `{returned}` but the manifest says `{manifest}`")]
    IdMismatch {
        /// The id returned (clipped).
        returned: String,
        /// The manifest's id.
        manifest: String,
    },
    /// More tools than allowed.
    #[error("it declares {0} tools; at most {MAX_TOOLS} are allowed")]
    TooManyTools(usize),
    /// A tool name past the length limit (clipped).
    #[error("tool name `{0}` is longer than {MAX_ID_CHARS} characters")]
    ToolNameTooLong(String),
    /// A tool's parameters are not JSON.
    #[error("tool `{tool}`: parameters is not valid JSON: {reason}")]
    ParametersNotJson {
        /// The tool.
        tool: String,
        /// The parser's message.
        reason: String,
    },
    /// Two tools of one name.
    #[error("tool `{0}` is registered twice")]
    DuplicateTool(String),
    /// A tool's name or schema does not pass the registry's check.
    #[error(transparent)]
    BadTool(#[from] clawhost_tools::RegistryError),
    /// One hook subscribed twice.
    #[error("hook `{0}` is subscribed twice")]
    DuplicateHook(HookKind),
    /// A tool hook names more tool patterns than allowed.
    #[error("hook `{hook}` names {count} tool patterns; at most {MAX_TOOL_PATTERNS} are allowed")]
    TooManyPatterns {
        /// The hook.
        hook: HookKind,
        /// How many it names.
        count: usize,
    },
    /// A tool pattern past the length limit.
    #[error(
        "hook `{hook}`: a tool pattern of {bytes} bytes; at most {MAX_NAME_BYTES} are allowed"
    )]
    PatternTooLong {
        /// The hook.
        hook: HookKind,
        /// The pattern's length.
        bytes: usize,
    },
    /// A tool pattern that is not a glob.
    #[error("hook `{hook}`: {error}")]
    BadPattern {
        /// The hook.
        hook: HookKind,
        /// Why.
        error: clawhost_hooks::BadToolPattern,
    },
    /// Harness ids without the harness export.
    #[error("it declares harnesses but does not export the harness interface")]
    HarnessWithoutExport,
    /// The harness export without a harness id.
    #[error("it exports the harness interface but declares no harness id")]
    ExportWithoutHarness,
    /// More than one harness.
    #[error("a plugin provides at most one harness")]
    TooManyHarnesses,
    /// A harness plugin with tools or hooks.
    #[error("a harness plugin may not also provide tools or hooks")]
    HarnessWithToolsOrHooks,
    /// A harness id that is malformed or reserved (clipped).
    #[error("harness id `{0}` is invalid or reserved")]
    BadHarnessId(String),
}

/// Check what a plugin declared against its manifest and convert it.
/// `remembered`: the declaration is one this host checked in full before
/// (a verified record), so tool schemas compile at their first use.
pub(crate) fn check(
    manifest_id: &str,
    manifest_version: &str,
    d: Declared,
    exports_harness: bool,
    remembered: bool,
) -> Result<Registration, RegistrationError> {
    if let Some(id) = d.id.as_deref().filter(|id| *id != manifest_id) {
        return Err(RegistrationError::IdMismatch {
            returned: clip(id, MAX_ID_CHARS).into_owned(),
            manifest: manifest_id.into(),
        });
    }
    if d.tools.len() > MAX_TOOLS {
        return Err(RegistrationError::TooManyTools(d.tools.len()));
    }
    let mut tools = Vec::new();
    for t in d.tools {
        if t.name.chars().count() > MAX_ID_CHARS {
            return Err(RegistrationError::ToolNameTooLong(
                clip(&t.name, MAX_ID_CHARS).into_owned(),
            ));
        }
        let parameters: serde_json::Value = serde_json::from_str(&t.parameters).map_err(|e| {
            RegistrationError::ParametersNotJson {
                tool: t.name.clone(),
                reason: e.to_string(),
            }
        })?;
        let spec = ToolSpec {
            name: t.name,
            description: t.description,
            parameters: parameters.into(),
        };
        if tools
            .iter()
            .any(|t: &clawhost_tools::CheckedTool| t.spec.name == spec.name)
        {
            return Err(RegistrationError::DuplicateTool(spec.name));
        }
        let checked = if remembered {
            clawhost_tools::CheckedTool::remembered(spec)
        } else {
            clawhost_tools::CheckedTool::check(spec)
        };
        tools.push(checked?);
    }
    let mut hooks: Vec<(HookKind, i32)> = Vec::new();
    for (kind, priority) in d.hooks {
        if hooks.iter().any(|(k, _)| *k == kind) {
            return Err(RegistrationError::DuplicateHook(kind));
        }
        hooks.push((kind, priority));
    }
    let mut tool_matchers = Vec::new();
    for (kind, patterns) in d.tool_filters {
        if patterns.len() > MAX_TOOL_PATTERNS {
            return Err(RegistrationError::TooManyPatterns {
                hook: kind,
                count: patterns.len(),
            });
        }
        if let Some(p) = patterns.iter().find(|p| p.len() > MAX_NAME_BYTES) {
            return Err(RegistrationError::PatternTooLong {
                hook: kind,
                bytes: p.len(),
            });
        }
        if let Some(matcher) = ToolMatcher::new(&patterns)
            .map_err(|error| RegistrationError::BadPattern { hook: kind, error })?
        {
            tool_matchers.push((kind, matcher));
        }
    }
    match (exports_harness, d.harnesses.len()) {
        (false, 0) | (true, 1) => {}
        (false, _) => return Err(RegistrationError::HarnessWithoutExport),
        (true, 0) => return Err(RegistrationError::ExportWithoutHarness),
        (true, _) => return Err(RegistrationError::TooManyHarnesses),
    }
    if exports_harness && (!tools.is_empty() || !hooks.is_empty()) {
        // Its tool or hook calls would re-enter the instance running the turn.
        return Err(RegistrationError::HarnessWithToolsOrHooks);
    }
    for h in &d.harnesses {
        let ok = !h.is_empty()
            && h.len() <= MAX_ID_CHARS
            && h.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !ok || RESERVED_HARNESS_IDS.contains(&h.as_str()) {
            return Err(RegistrationError::BadHarnessId(
                clip(h, MAX_ID_CHARS).into_owned(),
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
