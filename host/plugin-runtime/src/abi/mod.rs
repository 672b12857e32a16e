//! The plugin API versions this host serves. Each released version has its
//! own bindings of its frozen WIT and conversions into the host's types
//! (`v0_1`, `v0_2`); the rest of the runtime sees only the version-neutral
//! [`Request`] and [`Answer`] below. A new version adds a module and a case
//! here; an older version's WIT is never edited, so plugins built against it
//! keep loading. Every version's bindings borrow what the host hands a guest
//! (`ownership: Borrowing`): an event or a call points into the host's text
//! instead of copying it, and only what the host holds in another form (JSON
//! values) is made into text first ([`outgoing`]).

use std::sync::Arc;
use std::time::Duration;

use clawhost_agent_core::{HarnessError, PreparedTurn, Route, Support, TurnServices};
use clawhost_hooks::{
    ApprovalResolvedEvent, CallContext, HookError, HookEvent, HookKind, HookOutcome,
};
use wasmtime::component::{Component, Instance, InstancePre, Linker};
use wasmtime::Store;

use crate::state::PluginState;

pub(crate) mod api_version;
mod outgoing;
pub(crate) mod v0_1;
pub(crate) mod v0_2;

#[cfg(test)]
mod next_api_tests;

/// A plugin API version this host serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApiVersion {
    /// `openclaw:plugin@0.1.x`: one `plugin` export with a `handle-hook` for
    /// every hook; frozen.
    V0_1,
    /// `openclaw:plugin@0.2.x`: one export per hook family, typed errors, the
    /// harness world with a `turn` resource.
    V0_2,
}

/// The oldest API version this host serves.
pub const MIN_API: ApiVersion = ApiVersion::V0_1;
/// The newest API version this host serves (what the SDK builds against).
pub const MAX_API: ApiVersion = ApiVersion::V0_2;

impl ApiVersion {
    /// Every version served, oldest first.
    pub const ALL: [ApiVersion; 2] = [ApiVersion::V0_1, ApiVersion::V0_2];

    /// `major.minor`, e.g. `0.2`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V0_1 => "0.1",
            ApiVersion::V0_2 => "0.2",
        }
    }

    /// The served version a semver string belongs to: for 0.x the minor is
    /// the breaking part, so `0.2.0` and `0.2.7` are both 0.2.
    pub fn of(version: &str) -> Option<Self> {
        let mut parts = version.split('.');
        let (major, minor, patch) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || patch.parse::<u64>().is_err() {
            return None;
        }
        Self::ALL
            .into_iter()
            .find(|v| v.as_str().split_once('.') == Some((major, minor)))
    }

    /// Interfaces (without package or version) a component of this version
    /// may import, and which of them only a granted harness may import.
    pub(crate) fn imports(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            ApiVersion::V0_1 => (&["host", "types", "turn-types"], &["model", "tools"]),
            ApiVersion::V0_2 => (
                &["host", "types"],
                &["agent-turn", "native-runtime", "native-turn"],
            ),
        }
    }
}

impl std::fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Define every served version's host interfaces in the linker.
pub(crate) fn add_to_linker(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    v0_1::add_to_linker(linker)?;
    v0_2::add_to_linker(linker)
}

/// A tool a plugin declared, before the host checked it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeclaredTool {
    pub name: String,
    pub description: String,
    /// JSON Schema text.
    pub parameters: String,
}

/// What a plugin declared at registration, in host terms, before the host
/// checked it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Declared {
    /// The id `register` returned (0.1 only; 0.2 takes it from the manifest).
    pub id: Option<String>,
    /// Tools.
    pub tools: Vec<DeclaredTool>,
    /// Hook subscriptions with priority.
    pub hooks: Vec<(HookKind, i32)>,
    /// The tools a tool hook receives calls of (names or globs), where set.
    pub tool_filters: Vec<(HookKind, Vec<String>)>,
    /// Harness ids.
    pub harnesses: Vec<String>,
}

/// A call into a plugin, in host terms.
pub(crate) enum Request<'a> {
    /// Ask what the plugin provides.
    Register,
    /// Run one of its tools.
    CallTool {
        tool: &'a str,
        call_id: &'a str,
        /// JSON text of the parameters.
        params: &'a str,
        context: &'a CallContext,
    },
    /// A hook event, with the hook's own deadline when the operator set one.
    Hook(HookEvent<'a>, Option<Duration>),
    /// How an approval the plugin asked for was answered.
    ApprovalResolved(&'a ApprovalResolvedEvent),
    /// Whether its harness supports a route.
    Supports(Route),
    /// Run a harness turn.
    RunAttempt(PreparedTurn, Arc<dyn TurnServices>),
    /// Forget a session.
    Reset(String),
    /// Unloading.
    Dispose,
}

impl Request<'_> {
    /// What the answer to this request is called, for messages.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Request::CallTool { .. } => "tool result",
            Request::Hook(..) => "hook outcome",
            Request::RunAttempt(..) => "harness answer",
            _ => "answer",
        }
    }
}

/// A plugin's answer, in host terms.
pub(crate) enum Answer {
    /// To `Register`.
    Declared(Declared),
    /// To `CallTool`: JSON text, or the tool's error.
    Tool(Result<String, clawhost_agent_core::ToolError>),
    /// To `Hook`: the outcome, or why it is unusable (e.g. invalid JSON).
    Hook(Result<HookOutcome, HookError>),
    /// To `Supports`.
    Support(Support),
    /// To `RunAttempt`.
    Attempt(Result<String, HarnessError>),
    /// To `Reset` and `Dispose`.
    Done,
}

/// An answer and the size of the largest text it carried (what the host's
/// output cap limits).
pub(crate) struct Reply {
    pub answer: Answer,
    pub largest_text: usize,
}

impl Reply {
    fn new(answer: Answer, largest_text: usize) -> Self {
        Self {
            answer,
            largest_text,
        }
    }
}

/// Export lookups of a component, resolved once per plugin.
// One value per plugin: the size difference between versions costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Indices {
    V0_1(v0_1::Indices),
    V0_2(v0_2::Indices),
}

/// Whether a component built against `version` exports a harness, by the
/// name of its exports alone (before it is linked).
pub(crate) fn exports_harness(version: ApiVersion, component: &Component) -> bool {
    match version {
        ApiVersion::V0_1 => v0_1::exports_harness(component),
        ApiVersion::V0_2 => v0_2::exports_harness(component),
    }
}

impl Indices {
    /// Resolve the exports of a component built against `version`.
    pub(crate) fn new(
        version: ApiVersion,
        pre: &InstancePre<PluginState>,
    ) -> wasmtime::Result<Self> {
        Ok(match version {
            ApiVersion::V0_1 => Indices::V0_1(v0_1::Indices::new(pre)?),
            ApiVersion::V0_2 => Indices::V0_2(v0_2::Indices::new(pre)?),
        })
    }

    /// The callable exports of a fresh instance.
    pub(crate) fn load(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<Guest> {
        Ok(match self {
            Indices::V0_1(i) => Guest::V0_1(i.load(store, instance)?),
            Indices::V0_2(i) => Guest::V0_2(i.load(store, instance)?),
        })
    }
}

/// The callable exports of one instance.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Guest {
    V0_1(v0_1::Guest),
    V0_2(v0_2::Guest),
}

impl Guest {
    /// Make one call; a trap or a missing export is an `Err`.
    pub(crate) async fn call(
        &self,
        store: &mut Store<PluginState>,
        request: Request<'_>,
    ) -> wasmtime::Result<Reply> {
        match self {
            Guest::V0_1(g) => g.call(store, request).await,
            Guest::V0_2(g) => g.call(store, request).await,
        }
    }
}

/// JSON text of a value. `serde_json::to_string` writes straight into a
/// buffer; `Value`'s `Display` goes through `fmt` and is several times slower.
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    // A `Value` always serializes; `Display` is the same text, slower.
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// A tool call's outcome as every API version hands it to a hook: the
/// result's shared JSON text (made once for all hooks), or the error's
/// message (the WIT's `result<string, string>`).
pub(crate) fn outcome_text(
    outcome: &Result<clawhost_hooks::SharedJson, clawhost_agent_core::ToolError>,
) -> Result<&str, &str> {
    outcome
        .as_ref()
        .map(|v| v.text())
        .map_err(clawhost_agent_core::ToolError::message)
}

/// Parse JSON a plugin returned in a hook outcome (`what` names it).
pub(crate) fn json(text: &str, what: &str) -> Result<serde_json::Value, HookError> {
    serde_json::from_str(text)
        .map_err(|e| HookError::Failed(format!("the plugin's {what} is not valid JSON: {e}")))
}

/// JSON a harness handed in (tool arguments, schemas); kept as a string when
/// it does not parse, so the model still sees what was sent.
pub(crate) fn json_or_string(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

/// The summed length of some optional texts.
pub(crate) fn total_len(texts: &[&Option<String>]) -> usize {
    texts
        .iter()
        .map(|t| t.as_ref().map_or(0, String::len))
        .sum()
}
