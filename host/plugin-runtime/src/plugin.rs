//! A loaded plugin, and the adapters that make it a tool provider and a hook handler.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{
    Harness, HarnessError, PreparedTurn, Route, RunContext, Support, ToolError, ToolSpec,
    TurnServices,
};
use clawhost_hooks::{
    ApprovalResolvedEvent, CallContext, HookError, HookEvent, HookHandler, HookKind, HookOutcome,
    HookRegistration,
};
use clawhost_tools::{Tool, ToolOrigin};
use serde_json::Value;

use crate::abi::{json_text, Answer, ApiVersion, Request};
use crate::api_version::ComponentFacts;
use crate::cache::CacheOutcome;
use crate::instance::PluginInstance;
use crate::logs::{LogLine, PluginLogs};
use crate::manifest::PluginManifest;
use crate::registration::Registration;
use crate::sandbox::EffectiveGrants;
use crate::CallError;

/// A plugin that passed admission, compiled, instantiated and registered.
pub struct LoadedPlugin {
    pub(crate) manifest: PluginManifest,
    pub(crate) dir: PathBuf,
    pub(crate) sha256: String,
    pub(crate) registration: Registration,
    pub(crate) instance: PluginInstance,
    pub(crate) logs: Arc<PluginLogs>,
    /// `plugins` of the config it was loaded by: its entry (fail policies,
    /// hook deadlines, [`Self::settings`]) and `plugins.slots`, which may
    /// give an exclusive seam to another plugin. Shared, not copied per plugin.
    pub(crate) config: Arc<clawhost_config::PluginsConfig>,
    /// What the load checked of its component (its imports and exports, by name).
    pub(crate) facts: Arc<ComponentFacts>,
    /// Set when a remembered declaration stood in for `register`: whether
    /// the first instance then answered differently.
    pub(crate) remembered: Option<Arc<std::sync::atomic::AtomicBool>>,
}

/// Where a loaded plugin's tools and hooks came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declaration {
    /// Its `register` answered at load.
    Called,
    /// A verified record of an earlier load's answer (same component,
    /// config and grants): the plugin is instantiated on first use.
    Remembered,
    /// Remembered, but the first instance's `register` answered
    /// differently: the next load uses the new answer.
    Outdated,
}

impl Declaration {
    /// `called`, `remembered` or `outdated`.
    pub fn as_str(self) -> &'static str {
        match self {
            Declaration::Called => "called",
            Declaration::Remembered => "remembered",
            Declaration::Outdated => "outdated",
        }
    }
}

/// The interfaces a component imports and exports, by their full names
/// (`openclaw:plugin/tool-hooks@0.2.1`, `wasi:io/streams@0.2.6`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interfaces {
    /// What it needs from the host.
    pub imports: Vec<String>,
    /// What it offers the host.
    pub exports: Vec<String>,
}

impl Interfaces {
    /// The names of what the load checked of a component, as a status shows them.
    fn of(facts: &ComponentFacts) -> Self {
        Self {
            imports: facts.imports().map(|(n, _)| n.to_string()).collect(),
            exports: facts.exports().map(str::to_string).collect(),
        }
    }
}

/// Whether a plugin serves calls. As JSON: `"active"`, or
/// `{"quarantined": {"reason", "retryInMs"}}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum PluginState {
    /// Serving.
    Active,
    /// Quarantined after failed calls in a row: calls are refused until
    /// the backoff passes, then one is let through as a trial.
    Quarantined {
        /// Why.
        reason: String,
        /// Time left before the trial call, in ms (0: the next call).
        retry_in_ms: u64,
    },
}

/// A plugin's status, for `plugins status` and tests.
#[derive(Debug, Clone)]
pub struct PluginStatus {
    /// Plugin id.
    pub id: String,
    /// Version (from its manifest).
    pub version: String,
    /// The plugin API version it was built against.
    pub api: ApiVersion,
    /// Package directory.
    pub dir: PathBuf,
    /// Component sha256.
    pub sha256: String,
    /// Active or quarantined.
    pub state: PluginState,
    /// Tool names.
    pub tools: Vec<String>,
    /// Hook names with priority (the hooks it is delivered).
    pub hooks: Vec<(String, i32)>,
    /// Hooks it subscribed to but is not delivered, with the setting that
    /// withholds each (`hooks.allowConversationAccess`,
    /// `hooks.allowPromptInjection`, `grants.toolResults`).
    pub withheld: Vec<(String, &'static str)>,
    /// Harness ids.
    pub harnesses: Vec<String>,
    /// Effective grants.
    pub grants: EffectiveGrants,
    /// Instances created (re-instantiation after traps counts).
    pub instantiations: u32,
    /// Failed calls in a row.
    pub consecutive_failures: u32,
    /// What its calls cost and how they ended, since it loaded.
    pub stats: crate::PluginStats,
    /// Whether the component was not compiled for this load: it came from
    /// the cache, or from another package with the same component, or the
    /// load left it to the first use (see [`LoadedPlugin::load_component`]).
    pub from_cache: bool,
    /// Where its tools and hooks came from at load.
    pub declaration: Declaration,
}

impl LoadedPlugin {
    /// Plugin id.
    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    /// The operator's settings for this plugin: its `plugins.entries`
    /// entry, or the defaults when it has none.
    pub(crate) fn settings(&self) -> &clawhost_config::PluginEntry {
        crate::admission::entry(&self.config, self.id())
    }

    /// The priority a hook runs at: the operator's pin, else what the plugin registered.
    fn hook_priority(&self, kind: clawhost_hooks::HookKind, registered: i32) -> i32 {
        self.settings().priority_for(kind).unwrap_or(registered)
    }

    /// The interfaces its component imports and exports.
    pub fn interfaces(&self) -> Interfaces {
        Interfaces::of(&self.facts)
    }

    /// Its manifest.
    pub fn manifest(&self) -> &crate::PluginManifest {
        &self.manifest
    }

    /// The package directory it was loaded from.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The checked registration.
    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// Output the plugin logged or printed.
    pub fn logs(&self) -> Vec<LogLine> {
        self.logs.lines()
    }

    /// Current status.
    pub fn status(&self) -> PluginStatus {
        let r = &self.registration;
        let mut hooks = Vec::new();
        let mut withheld = Vec::new();
        for (k, p) in &r.hooks {
            match self.hook_allowed(*k) {
                Ok(()) => hooks.push((k.name().to_string(), self.hook_priority(*k, *p))),
                Err(setting) => withheld.push((k.name().to_string(), setting)),
            }
        }
        PluginStatus {
            id: r.id.clone(),
            version: r.version.clone(),
            api: self.instance.api(),
            dir: self.dir.clone(),
            sha256: self.sha256.clone(),
            state: match self.instance.quarantine() {
                Some((reason, left)) => PluginState::Quarantined {
                    reason,
                    retry_in_ms: left.as_millis() as u64,
                },
                None => PluginState::Active,
            },
            tools: r.tools.iter().map(|t| t.spec.name.clone()).collect(),
            hooks,
            withheld,
            harnesses: r.harnesses.clone(),
            grants: self.instance.grants().clone(),
            instantiations: self.instance.instantiations(),
            consecutive_failures: self.instance.consecutive_failures(),
            stats: self.instance.stats(),
            from_cache: self.instance.component_outcome() != CacheOutcome::Compiled,
            declaration: match &self.remembered {
                None => Declaration::Called,
                Some(outdated) if outdated.load(std::sync::atomic::Ordering::Relaxed) => {
                    Declaration::Outdated
                }
                Some(_) => Declaration::Remembered,
            },
        }
    }

    /// Acquire the plugin's compiled component now if its load deferred it
    /// (a warm start with a remembered declaration does, until the first
    /// call), and say how it was acquired: from the cache, shared with
    /// another package, or compiled.
    pub async fn load_component(&self) -> Result<CacheOutcome, CallError> {
        self.instance.load_component().await
    }

    /// Discard the plugin's live instance and start a fresh one from the
    /// pre-instantiated component: whatever state the plugin kept is lost.
    pub async fn restart(&self) -> Result<(), CallError> {
        self.instance.restart().await
    }

    /// Call one of the plugin's tools directly (the agent goes through the dispatcher).
    pub async fn call_tool(
        &self,
        tool: &str,
        call_id: &str,
        params: &Value,
        ctx: &CallContext,
    ) -> Result<Result<Value, ToolError>, CallError> {
        self.call_tool_text(tool, call_id, &json_text(params), ctx)
            .await
    }

    /// [`Self::call_tool`] with the parameters as JSON text.
    pub async fn call_tool_text(
        &self,
        tool: &str,
        call_id: &str,
        params: &str,
        ctx: &CallContext,
    ) -> Result<Result<Value, ToolError>, CallError> {
        let call = Request::CallTool {
            tool,
            call_id,
            params,
            context: ctx,
        };
        match self.instance.call(call).await? {
            Answer::Tool(Ok(text)) => Ok(serde_json::from_str(&text).map_err(|e| {
                ToolError::failed(format!(
                    "plugin `{}` returned a result that is not valid JSON: {e}",
                    self.id()
                ))
            })),
            Answer::Tool(Err(message)) => Ok(Err(message)),
            _ => Err(self.wrong_answer("call-tool")),
        }
    }

    /// The error for an answer of the wrong kind to `asked`.
    fn wrong_answer(&self, asked: &'static str) -> CallError {
        CallError::WrongAnswer {
            id: self.id().to_string(),
            asked,
        }
    }

    /// Deliver one hook event.
    pub async fn handle_hook(&self, event: HookEvent<'_>) -> Result<HookOutcome, HookError> {
        let kind = event.kind();
        let timeout = self
            .settings()
            .timeout_ms_for(kind)
            .map(std::time::Duration::from_millis);
        match self.instance.call(Request::Hook(event, timeout)).await {
            Ok(Answer::Hook(outcome)) => outcome,
            Ok(_) => Err(HookError::Failed(self.wrong_answer("hook").to_string())),
            Err(e) => Err(HookError::Failed(e.to_string())),
        }
    }

    /// Tools of this plugin, as dispatchable tools.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
        self.registration
            .tools
            .iter()
            .map(|checked| {
                Arc::new(PluginTool {
                    plugin: self.clone(),
                    checked: checked.clone(),
                }) as Arc<dyn Tool>
            })
            .collect()
    }

    /// The plugin's harness, if it provides one.
    pub fn harness(self: &Arc<Self>) -> Option<Arc<dyn Harness>> {
        let id = self.registration.harnesses.first()?.clone();
        Some(Arc::new(PluginHarness {
            plugin: self.clone(),
            id,
        }))
    }

    /// Whether `kind` may be delivered to this plugin: its entry's grants
    /// and hook settings allow it, and no slot gives the seam to another
    /// plugin. `Err` names the setting that withholds it.
    fn hook_allowed(&self, kind: HookKind) -> Result<(), &'static str> {
        self.settings().hook_allowed(kind)?;
        match kind {
            HookKind::CompactionProvider => self.config.slots.compaction_allowed(self.id()),
            _ => Ok(()),
        }
    }

    /// Hook subscriptions of this plugin that it may be delivered (see
    /// [`Self::hook_allowed`]).
    pub fn hook_registrations(self: &Arc<Self>) -> Vec<HookRegistration> {
        self.registration
            .hooks
            .iter()
            .filter(|(kind, _)| match self.hook_allowed(*kind) {
                Ok(()) => true,
                Err(setting) => {
                    tracing::warn!(plugin = %self.id(), hook = kind.name(), "hook withheld: plugins.entries.{}.{setting} does not allow it", self.id());
                    false
                }
            })
            .map(|(kind, priority)| {
                HookRegistration::new(
                    self.id(),
                    *kind,
                    self.hook_priority(*kind, *priority),
                    Arc::new(PluginHooks(self.clone())),
                )
                .with_fail_policy(self.settings().fail_policy_for(*kind))
                .with_tools(self.registration.tool_matcher(*kind).cloned())
            })
            .collect()
    }
}

struct PluginTool {
    plugin: Arc<LoadedPlugin>,
    checked: clawhost_tools::CheckedTool,
}

#[async_trait]
impl Tool for PluginTool {
    fn spec(&self) -> &ToolSpec {
        &self.checked.spec
    }

    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Plugin(self.plugin.id().to_string())
    }

    fn compiled_schema(&self) -> Option<clawhost_tools::CompiledSchema> {
        Some(self.checked.schema.clone())
    }

    async fn call(
        &self,
        call_id: &str,
        params: clawhost_tools::SharedJson,
        ctx: &RunContext,
    ) -> Result<Value, ToolError> {
        let ctx = CallContext {
            agent_id: ctx.agent_id.clone(),
            session_id: ctx.session_id.clone(),
            model_ref: ctx.model_ref.clone(),
        };
        match self
            .plugin
            .call_tool_text(&self.checked.spec.name, call_id, params.text(), &ctx)
            .await
        {
            Ok(result) => result,
            Err(e) => Err(ToolError::failed(e.to_string())),
        }
    }
}

struct PluginHooks(Arc<LoadedPlugin>);

#[async_trait]
impl HookHandler for PluginHooks {
    async fn handle(&self, event: HookEvent<'_>) -> Result<HookOutcome, HookError> {
        self.0.handle_hook(event).await
    }

    async fn approval_resolved(&self, event: &ApprovalResolvedEvent) -> Result<(), HookError> {
        match self.0.instance.call(Request::ApprovalResolved(event)).await {
            Ok(_) => Ok(()),
            Err(e) => Err(HookError::Failed(e.to_string())),
        }
    }
}

struct PluginHarness {
    plugin: Arc<LoadedPlugin>,
    id: String,
}

#[async_trait]
impl Harness for PluginHarness {
    fn id(&self) -> &str {
        &self.id
    }

    fn execution(&self) -> String {
        format!("wasm plugin `{}` (sandboxed)", self.plugin.id())
    }

    async fn supports(&self, route: &Route) -> Support {
        match self
            .plugin
            .instance
            .call(Request::Supports(route.clone()))
            .await
        {
            Ok(Answer::Support(s)) => s,
            Ok(_) => Support::Unsupported(self.plugin.wrong_answer("supports").to_string()),
            Err(e) => Support::Unsupported(format!("supports() failed: {e}")),
        }
    }

    async fn run_attempt(
        &self,
        turn: PreparedTurn,
        services: Arc<dyn TurnServices>,
    ) -> Result<String, HarnessError> {
        match self
            .plugin
            .instance
            .call(Request::RunAttempt(turn, services))
            .await
        {
            Ok(Answer::Attempt(answer)) => answer,
            Ok(_) => Err(HarnessError::Failed(
                self.plugin.wrong_answer("run-attempt").to_string(),
            )),
            Err(e) => Err(HarnessError::Failed(e.to_string())),
        }
    }

    async fn reset(&self, session_id: &str) {
        if let Err(e) = self
            .plugin
            .instance
            .call(Request::Reset(session_id.into()))
            .await
        {
            tracing::warn!(harness = %self.id, error = %e, "harness reset failed");
        }
    }

    async fn dispose(&self) {
        if let Err(e) = self.plugin.instance.call(Request::Dispose).await {
            tracing::warn!(harness = %self.id, error = %e, "harness dispose failed");
        }
    }
}
