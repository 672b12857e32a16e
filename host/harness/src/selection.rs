//! Runtime selection: which runtime runs a session's turn, and why.
//!
//! Order: the runtime recorded on an existing session (no hot switch) →
//! `OPENCLAW_AGENT_RUNTIME` for new or reset sessions → config policy, whose
//! deciding scope is the narrowest that sets an id (model `agentRuntime` →
//! provider `agentRuntime` → `agents.list[].embeddedHarness` →
//! `agents.defaults.embeddedHarness`), or failing that the narrowest that sets
//! a fallback. Only the deciding scope's fallback applies.

use clawhost_agent_core::{Route, Support};
use clawhost_config::{HarnessPolicy, RuntimePolicy};

use crate::{normalize, RuntimeId, BUILTIN};

/// Runtime policy at each scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyScopes {
    /// `models.providers.<p>.models[].agentRuntime`.
    pub model: Option<RuntimePolicy>,
    /// `models.providers.<p>.agentRuntime`.
    pub provider: Option<RuntimePolicy>,
    /// `agents.list[].embeddedHarness`.
    pub agent: Option<HarnessPolicy>,
    /// `agents.defaults.embeddedHarness`.
    pub defaults: Option<HarnessPolicy>,
}

/// Everything selection looks at.
#[derive(Debug, Clone)]
pub struct SelectionRequest<'a> {
    /// The runtime recorded on the session, if it has run before.
    pub session_runtime: Option<&'a str>,
    /// `OPENCLAW_AGENT_RUNTIME`.
    pub env_force: Option<&'a str>,
    /// Config policy.
    pub policy: &'a PolicyScopes,
    /// The effective provider route.
    pub route: &'a Route,
    /// Ids of the registered plugin harnesses.
    pub registered: &'a [String],
    /// Each registered plugin harness's claim on the route (may be empty
    /// when the session is pinned: a pinned runtime is not asked again).
    pub supports: &'a [(String, Support)],
}

/// Why a runtime was selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Recorded on the existing session.
    Pinned,
    /// Forced by `OPENCLAW_AGENT_RUNTIME`.
    Forced,
    /// `auto` found a plugin harness claiming the route.
    AutoPlugin,
    /// `auto` found none; the built-in runs.
    AutoFallback,
    /// Named explicitly by config.
    Explicit,
    /// Named explicitly but missing or unsupported; the scope's fallback applied.
    ExplicitFallback,
}

impl Reason {
    /// The reason as shown in status.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Pinned => "pinned",
            Reason::Forced => "forced",
            Reason::AutoPlugin => "auto-plugin",
            Reason::AutoFallback => "auto-fallback",
            Reason::Explicit => "explicit",
            Reason::ExplicitFallback => "explicit-fallback",
        }
    }
}

/// The selected runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Runtime id (`openclaw` or a plugin harness id).
    pub runtime: String,
    /// Why.
    pub reason: Reason,
    /// Details for status.
    pub detail: String,
}

/// Why no runtime could be selected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// A named runtime is not registered.
    #[error(
        "runtime `{id}` ({source_of}) is not registered; registered plugin harnesses: {registered}"
    )]
    NotRegistered {
        /// The runtime.
        id: String,
        /// Where it was named.
        source_of: String,
        /// What is registered.
        registered: String,
    },
    /// A named runtime does not support the route.
    #[error("runtime `{id}` ({source_of}) does not support route {route}: {why}")]
    Unsupported {
        /// The runtime.
        id: String,
        /// Where it was named.
        source_of: String,
        /// The route.
        route: String,
        /// Its reason.
        why: String,
    },
    /// `auto` with `fallback: "none"` found no plugin harness.
    #[error("no plugin harness supports route {route} and fallback is \"none\" ({source_of})")]
    NoneSupported {
        /// The route.
        route: String,
        /// Where the fallback was set.
        source_of: String,
    },
    /// An official endpoint over plaintext HTTP.
    #[error("refusing {url}: an official provider endpoint must use https")]
    PlaintextOfficial {
        /// The URL.
        url: String,
    },
    /// An unknown fallback value.
    #[error("unknown fallback `{value}` ({source_of}); use \"openclaw\", \"pi\" or \"none\"")]
    BadFallback {
        /// The value.
        value: String,
        /// Where it was set.
        source_of: String,
    },
}

const OFFICIAL_HOSTS: &[&str] = &["api.openai.com", "chatgpt.com", "api.anthropic.com"];
const CODEX_ROUTES: &[&str] = &[
    "https://api.openai.com/v1",
    "https://chatgpt.com/backend-api/codex",
];

/// Whether `url` is an official provider endpoint over plaintext HTTP,
/// judged by the URL parser the HTTP client uses (so `http://user@host`, a
/// trailing-dot `host.`, upper case or a port do not hide the host).
fn plaintext_official(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url.trim()) else {
        return false;
    };
    let host = parsed
        .host_str()
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_ascii_lowercase();
    parsed.scheme() == "http" && OFFICIAL_HOSTS.contains(&host.as_str())
}

/// Whether `codex` may be picked implicitly: only the exact official HTTPS
/// Platform Responses or ChatGPT Responses route with no authored overrides.
pub fn codex_eligible(route: &Route) -> bool {
    route.api == clawhost_config::ApiKind::OpenaiResponses
        && !route.authored_overrides
        && CODEX_ROUTES.contains(&route.base_url.trim_end_matches('/'))
}

fn route_name(route: &Route) -> String {
    format!(
        "{}/{} ({} at {})",
        route.provider,
        route.model,
        route.api.name(),
        route.base_url
    )
}

fn registered(req: &SelectionRequest) -> String {
    if req.registered.is_empty() {
        "none".into()
    } else {
        req.registered
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Check a named plugin harness: registered and claiming the route.
fn named(req: &SelectionRequest, id: &str, source_of: &str) -> Result<String, SelectionError> {
    match req.supports.iter().find(|(h, _)| h == id) {
        None => Err(SelectionError::NotRegistered {
            id: id.into(),
            source_of: source_of.into(),
            registered: registered(req),
        }),
        Some((_, Support::Unsupported(why))) => Err(SelectionError::Unsupported {
            id: id.into(),
            source_of: source_of.into(),
            route: route_name(req.route),
            why: why.clone(),
        }),
        Some((_, Support::Supported { reason, .. })) => Ok(reason.clone()),
    }
}

fn auto(req: &SelectionRequest) -> Option<(String, String)> {
    let mut claims: Vec<(&String, i32, &String)> = req
        .supports
        .iter()
        .filter_map(|(id, s)| match s {
            Support::Supported { priority, reason } => Some((id, *priority, reason)),
            Support::Unsupported(_) => None,
        })
        .filter(|(id, _, _)| id.as_str() != "codex" || codex_eligible(req.route))
        .collect();
    claims.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    claims
        .first()
        .map(|(id, p, reason)| ((*id).clone(), format!("priority {p}: {reason}")))
}

/// A scope's (id, fallback, name).
type Scope<'a> = (Option<&'a str>, Option<&'a str>, &'static str);

fn rt(x: &Option<RuntimePolicy>) -> (Option<&str>, Option<&str>) {
    (
        x.as_ref().and_then(|r| r.id.as_deref()),
        x.as_ref().and_then(|r| r.fallback.as_deref()),
    )
}

fn hp(x: &Option<HarnessPolicy>) -> (Option<&str>, Option<&str>) {
    (
        x.as_ref().and_then(|r| r.runtime.as_deref()),
        x.as_ref().and_then(|r| r.fallback.as_deref()),
    )
}

fn scopes(p: &PolicyScopes) -> [Scope<'_>; 4] {
    let (m, pr, a, d) = (rt(&p.model), rt(&p.provider), hp(&p.agent), hp(&p.defaults));
    [
        (m.0, m.1, "model agentRuntime"),
        (pr.0, pr.1, "provider agentRuntime"),
        (a.0, a.1, "agents.list[].embeddedHarness"),
        (d.0, d.1, "agents.defaults.embeddedHarness"),
    ]
}

enum Fallback {
    Builtin,
    None,
    Unset,
}

fn fallback(value: Option<&str>, source_of: &str) -> Result<Fallback, SelectionError> {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(Fallback::Unset),
        Some(v) if v == "pi" || v == "openclaw" => Ok(Fallback::Builtin),
        Some(v) if v == "none" => Ok(Fallback::None),
        Some(v) => Err(SelectionError::BadFallback {
            value: v,
            source_of: source_of.into(),
        }),
    }
}

fn selection(runtime: &str, reason: Reason, detail: String) -> Selection {
    Selection {
        runtime: runtime.into(),
        reason,
        detail,
    }
}

/// Select the runtime for a turn.
pub fn select(req: &SelectionRequest) -> Result<Selection, SelectionError> {
    if plaintext_official(&req.route.base_url) {
        return Err(SelectionError::PlaintextOfficial {
            url: req.route.base_url.clone(),
        });
    }
    if let Some(pinned) = req.session_runtime {
        return match normalize(Some(pinned)) {
            RuntimeId::OpenClaw | RuntimeId::Auto => Ok(selection(
                BUILTIN,
                Reason::Pinned,
                "recorded on the session".into(),
            )),
            RuntimeId::Plugin(id) => {
                if req.registered.contains(&id) {
                    Ok(selection(
                        &id,
                        Reason::Pinned,
                        "recorded on the session".into(),
                    ))
                } else {
                    Err(SelectionError::NotRegistered {
                        id,
                        source_of: "recorded on the session".into(),
                        registered: registered(req),
                    })
                }
            }
        };
    }
    let all = scopes(req.policy);
    // A bad fallback is an error wherever it is written, deciding or not.
    for (_, fb, source) in &all {
        fallback(*fb, source)?;
    }
    let deciding = all
        .iter()
        .find(|s| s.0.is_some())
        .or_else(|| all.iter().find(|s| s.1.is_some()));
    let (id, fb, source) =
        deciding
            .map(|s| (s.0, s.1, s.2))
            .unwrap_or((None, None, "no runtime policy"));
    let fb = fallback(fb, source)?;
    // The environment overrides the id only: the config's fallback stands.
    if let Some(forced) = req.env_force.filter(|v| !v.trim().is_empty()) {
        let env = "OPENCLAW_AGENT_RUNTIME";
        return match normalize(Some(forced)) {
            RuntimeId::OpenClaw => Ok(selection(BUILTIN, Reason::Forced, env.into())),
            RuntimeId::Auto => match (auto(req), fb) {
                (Some((id, why)), _) => {
                    Ok(selection(&id, Reason::Forced, format!("{env}=auto: {why}")))
                }
                (None, Fallback::None) => Err(SelectionError::NoneSupported {
                    route: route_name(req.route),
                    source_of: format!("{env}=auto, fallback in {source}"),
                }),
                (None, _) => Ok(selection(
                    BUILTIN,
                    Reason::Forced,
                    format!("{env}=auto: no plugin harness claims the route"),
                )),
            },
            RuntimeId::Plugin(id) => {
                let why = named(req, &id, env)?;
                Ok(selection(&id, Reason::Forced, format!("{env}: {why}")))
            }
        };
    }
    match normalize(id) {
        RuntimeId::Auto => match auto(req) {
            Some((id, why)) => Ok(selection(&id, Reason::AutoPlugin, why)),
            None => match fb {
                Fallback::None => Err(SelectionError::NoneSupported {
                    route: route_name(req.route),
                    source_of: source.into(),
                }),
                _ => Ok(selection(
                    BUILTIN,
                    Reason::AutoFallback,
                    "no plugin harness claims the route".into(),
                )),
            },
        },
        RuntimeId::OpenClaw => Ok(selection(BUILTIN, Reason::Explicit, source.into())),
        RuntimeId::Plugin(id) => match named(req, &id, source) {
            Ok(why) => Ok(selection(&id, Reason::Explicit, format!("{source}: {why}"))),
            Err(e) => match fb {
                Fallback::Builtin => Ok(selection(
                    BUILTIN,
                    Reason::ExplicitFallback,
                    format!("{e}; fallback in {source}"),
                )),
                _ => Err(e),
            },
        },
    }
}
