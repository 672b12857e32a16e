//! Runtime ids and their aliases.

/// Id of the built-in runtime (the host's own loop).
pub const BUILTIN: &str = "openclaw";

/// A normalized runtime id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeId {
    /// Choose: a plugin harness that claims the route, else the built-in.
    Auto,
    /// The built-in runtime.
    OpenClaw,
    /// A plugin harness by id.
    Plugin(String),
}

impl RuntimeId {
    /// The id as shown in status (`auto`, `openclaw`, or the plugin id).
    pub fn as_str(&self) -> &str {
        match self {
            RuntimeId::Auto => "auto",
            RuntimeId::OpenClaw => BUILTIN,
            RuntimeId::Plugin(id) => id,
        }
    }
}

/// Normalize a configured id: empty, `default` and `auto` → auto; `pi` and
/// `openclaw` → the built-in; `codex-app-server` → `codex`.
pub fn normalize(id: Option<&str>) -> RuntimeId {
    let id = id
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match id.as_str() {
        "" | "default" | "auto" => RuntimeId::Auto,
        "pi" | "openclaw" => RuntimeId::OpenClaw,
        "codex-app-server" => RuntimeId::Plugin("codex".into()),
        _ => RuntimeId::Plugin(id),
    }
}
