//! The embedded agent runner: loads the configured plugins, registers host and
//! plugin tools behind one dispatcher, collects hook subscriptions, and runs
//! turns with the built-in `openclaw` loop.

mod agent_host;
mod compact;
mod observed_model;
pub mod persist;
mod run_hooks;
mod session;
mod tool_names;
mod turn_hooks;

use std::sync::Arc;

use anyhow::Context;
use clawhost_agent_core::{
    ModelClient, RunContext, SharedMessage, TurnError, TurnLoop, TurnOutcome, UserInput,
};
use clawhost_config::Config;
use clawhost_harness::HarnessRegistry;
use clawhost_hooks::HookRunner;
use clawhost_llm::ModelRuntimeGeneration;
use clawhost_mcp_client::{McpServers, ServerReport};
use clawhost_plugin_runtime::{LoadReport, PluginHost};
use clawhost_resources::Resources;
use clawhost_tools::{EchoTool, Tool, ToolDispatcher, ToolLimits, ToolPolicy, ToolRegistry};
pub use clawhost_workspace_tools::ExecEnvHooks;

pub use agent_host::{
    open_store, AgentHost, ConfigOverlay, HostTurnError, ReloadReport, TurnReply, TurnRequest,
};
pub use clawhost_harness::BUILTIN as BUILTIN_RUNTIME;
pub use compact::{compact, CompactionHooks, CompactionRecord};
pub use observed_model::ObservedModel;
pub use persist::PersistError;
pub use session::{RunError, Session, RUNTIME_ENV};
pub use tool_names::WithheldTool;
pub use turn_hooks::MAX_REVISIONS;

/// An agent host: plugins, the tool dispatcher and the hook runner.
pub struct EmbeddedRunner {
    config: Config,
    plugins: PluginHost,
    harnesses: HarnessRegistry,
    lanes: clawhost_sessions::SessionLanes,
    hooks: Arc<HookRunner>,
    dispatcher: Arc<ToolDispatcher>,
    resources: Resources,
    /// Plugins refused while wiring: (package dir, id, why).
    refused: Vec<(std::path::PathBuf, String, String)>,
    /// Plugin tools not offered (a name clash, a built-in's name).
    withheld: Vec<WithheldTool>,
    /// The MCP servers this runner started, and how each stands.
    mcp: McpServers,
    mcp_reports: Vec<ServerReport>,
}

/// MCP servers started for a runner: the servers, their tools and reports
/// ([`McpServers::start`]).
pub type StartedMcp = (McpServers, Vec<Arc<dyn Tool>>, Vec<ServerReport>);

/// Tools built into the host: the workspace tools (files, patches, search,
/// processes, web fetch) set up from `config`, and the `echo` fixture when
/// `tools.testFixtures` is set; an agent without a configured workspace works
/// in the directory the host started in. `exec` asks the hooks bound to
/// `exec_env` for its commands' variables.
pub fn host_tools(config: &Config, exec_env: &ExecEnvHooks) -> Vec<Arc<dyn Tool>> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| config.base_dir.clone());
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if config.tools.test_fixtures {
        tools.push(Arc::new(EchoTool::default()));
    }
    tools.extend(clawhost_workspace_tools::builtin_tools(
        config, cwd, exec_env,
    ));
    tools
}

/// Every plugin `config` names: the packages of `plugins.paths` and the
/// extensions of its resource packages, with a report for each, and the
/// resources themselves.
pub async fn load_plugins(
    config: &Config,
) -> anyhow::Result<(PluginHost, Vec<LoadReport>, Resources)> {
    let packages: Vec<_> = config
        .resources
        .packages
        .iter()
        .map(|p| config.resolve(p))
        .collect();
    let resources = Resources::load(&packages).context("loading resource packages")?;
    let mut plugins = PluginHost::new(config).context("setting up the plugin engine")?;
    let mut reports = plugins.load_configured().await;
    for dir in &resources.extensions {
        let result = plugins.load_package(dir).await;
        reports.push(LoadReport {
            dir: dir.clone(),
            id: match &result {
                Ok(p) => Some(p.id().to_string()),
                Err(e) => e.plugin_id().map(str::to_string),
            },
            result: result.map(|_| ()),
        });
    }
    Ok((plugins, reports, resources))
}

impl EmbeddedRunner {
    /// Load the configured plugins and wire tools and hooks. Plugins that fail
    /// to load, or whose tools cannot be registered, are reported, not fatal.
    /// A plugin marked `required` that is not wired stops the start.
    pub async fn start(config: Config) -> anyhow::Result<(Self, Vec<LoadReport>)> {
        let (runner, reports) = Self::wire(config).await?;
        runner.check_required(&reports)?;
        Ok((runner, reports))
    }

    /// What [`Self::start`] wires, without refusing to start when a
    /// required plugin is missing: for the commands that report on plugins.
    pub async fn wire(config: Config) -> anyhow::Result<(Self, Vec<LoadReport>)> {
        Self::wire_with(config, None).await
    }

    /// [`Self::start`] over the MCP connections of `self` (not restarted),
    /// their tools listed again: the runner of a new generation after an
    /// MCP server said its tools changed.
    pub async fn relisted(&self) -> anyhow::Result<(Self, Vec<LoadReport>)> {
        let (runner, reports) = Self::wire_with(self.config.clone(), Some(&self.mcp)).await?;
        runner.check_required(&reports)?;
        Ok((runner, reports))
    }

    /// [`Self::wire`]; `mcp`: connections to list again instead of starting
    /// the configured servers.
    async fn wire_with(
        config: Config,
        mcp: Option<&McpServers>,
    ) -> anyhow::Result<(Self, Vec<LoadReport>)> {
        let servers = async {
            match mcp {
                Some(servers) => servers.relist().await,
                None => McpServers::start(&config).await,
            }
        };
        let (plugins, mcp) = tokio::join!(load_plugins(&config), servers);
        let (plugins, mut reports, resources) = plugins?;
        let mut runner = Self::from_sources(config, plugins, mcp)?;
        runner.resources = resources;
        reports.extend(runner.refused());
        Ok((runner, reports))
    }

    /// Wire an already loaded plugin host. A tool name two plugins declare
    /// is offered by neither, and a built-in's name only where the operator
    /// allows it ([`Self::withheld`]); a plugin whose tools cannot be
    /// registered (an oversized description, a bad schema) is refused whole
    /// (its tools, hooks and harness) and listed in [`Self::refused`].
    pub fn from_plugins(config: Config, plugins: PluginHost) -> anyhow::Result<Self> {
        Self::from_sources(config, plugins, StartedMcp::default())
    }

    /// [`Self::from_plugins`], with the tools of started MCP servers after
    /// the plugins' and the host's: an MCP tool whose name is taken is not
    /// offered, and its server's report says why.
    pub fn from_sources(
        config: Config,
        mut plugins: PluginHost,
        (mcp, mcp_tools, mut mcp_reports): StartedMcp,
    ) -> anyhow::Result<Self> {
        let mut registry = ToolRegistry::with_limits(ToolLimits::from_config(&config.tools));
        let mut refused = Vec::new();
        let exec_env = ExecEnvHooks::default();
        let builtins = host_tools(&config, &exec_env);
        let builtin_names: Vec<String> = builtins.iter().map(|t| t.spec().name.clone()).collect();
        let loaded = plugins.plugins().to_vec();
        let (offered, withheld) = tool_names::offered_tools(&config, &loaded, &builtin_names);
        for (plugin, tools) in loaded.into_iter().zip(offered) {
            if let Err(e) = registry.register_all(tools) {
                tracing::warn!(plugin = plugin.id(), error = %e, "plugin refused: its tools cannot be registered");
                plugins.remove(plugin.id());
                refused.push((
                    plugin.dir().to_path_buf(),
                    plugin.id().to_string(),
                    e.to_string(),
                ));
            }
        }
        // A plugin tool the operator let replace a built-in takes its name.
        let taken = registry.names();
        for tool in builtins {
            let name = &tool.spec().name;
            if taken.iter().any(|t| t.eq_ignore_ascii_case(name)) {
                tracing::info!(tool = %name, "a plugin's tool replaces the built-in `{name}` (replaceBuiltins)");
                continue;
            }
            registry
                .register_builtin(tool)
                .context("registering host tools")?;
        }
        for tool in mcp_tools {
            let (name, origin) = (tool.spec().name.clone(), tool.origin());
            if let Err(e) = registry.register(tool) {
                let clawhost_tools::ToolOrigin::Mcp(server) = origin else {
                    continue;
                };
                if let Some(report) = mcp_reports.iter_mut().find(|r| r.server == server) {
                    if let Some(at) = report
                        .tools
                        .iter()
                        .position(|(offered, _)| *offered == name)
                    {
                        let (_, remote) = report.tools.remove(at);
                        report.withheld.push((remote, e.to_string()));
                    }
                }
            }
        }
        let hooks = Arc::new(HookRunner::new(plugins.hook_registrations()));
        exec_env.bind(hooks.clone());
        let dispatcher = Arc::new(
            ToolDispatcher::new(
                registry,
                ToolPolicy::from_config(&config.tools).with_agents(&config.agents),
                hooks.clone(),
            )
            .with_approvals(config.approvals.clone()),
        );
        let harnesses = HarnessRegistry::new(plugins.harnesses())?;
        Ok(Self {
            config,
            plugins,
            harnesses,
            lanes: clawhost_sessions::SessionLanes::new(),
            resources: Resources::default(),
            hooks,
            dispatcher,
            refused,
            withheld,
            mcp,
            mcp_reports,
        })
    }

    /// How each configured MCP server stands, with its tools.
    pub fn mcp_servers(&self) -> &[ServerReport] {
        &self.mcp_reports
    }

    /// Whether an MCP server said its tools changed since this runner
    /// listed them (the host then builds a new generation).
    pub fn mcp_stale(&self) -> bool {
        self.mcp.stale()
    }

    /// Plugin tools not offered: a name two plugins declare, or a built-in
    /// tool's name without `replaceBuiltins`.
    pub fn withheld(&self) -> &[WithheldTool] {
        &self.withheld
    }

    /// Refuse to run without a plugin marked `required` (a guard the
    /// operator relies on): each one must be loaded and wired.
    fn check_required(&self, reports: &[LoadReport]) -> anyhow::Result<()> {
        let mut missing = Vec::new();
        for (id, entry) in &self.config.plugins.entries {
            if !entry.required || self.plugins.plugin(id).is_some() {
                continue;
            }
            let why = reports
                .iter()
                .filter(|r| r.id.as_deref() == Some(id.as_str()))
                .find_map(|r| r.result.as_ref().err().map(ToString::to_string))
                .unwrap_or_else(|| "no package in plugins.paths has this id".into());
            missing.push(format!("`{id}`: {why}"));
        }
        if missing.is_empty() {
            return Ok(());
        }
        anyhow::bail!(
            "the agent does not start without its required plugins (plugins.entries.<id>.required): {}",
            missing.join("; ")
        )
    }

    /// Plugins that loaded but were refused while wiring (their tools could
    /// not be registered).
    pub fn refused(&self) -> Vec<LoadReport> {
        self.refused
            .iter()
            .map(|(dir, id, reason)| LoadReport {
                dir: dir.clone(),
                id: Some(id.clone()),
                result: Err(clawhost_plugin_runtime::LoadError::Registration {
                    id: id.clone(),
                    reason: reason.clone(),
                }),
            })
            .collect()
    }

    /// The loaded plugins.
    pub fn plugins(&self) -> &PluginHost {
        &self.plugins
    }

    /// The registered plugin harnesses.
    pub fn harnesses(&self) -> &HarnessRegistry {
        &self.harnesses
    }

    /// Skills, prompts and themes from resource packages.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// An agent's system prompt: its configured prompt, then the skills.
    pub fn system_prompt(&self, agent_id: &str) -> Option<String> {
        let base = self
            .config
            .agents
            .settings(agent_id)
            .and_then(|s| s.system_prompt)
            .unwrap_or_default();
        let full = format!("{base}{}", self.resources.skills_prompt());
        (!full.trim().is_empty()).then(|| full.trim_start().to_string())
    }

    /// Share `lanes` with other runners (the ones a reload replaces), so a
    /// session's turns stay serialized across a reload.
    pub fn with_lanes(mut self, lanes: clawhost_sessions::SessionLanes) -> Self {
        self.lanes = lanes;
        self
    }

    /// Per-session lanes (runs on one session are serialized).
    pub fn lanes(&self) -> &clawhost_sessions::SessionLanes {
        &self.lanes
    }

    /// The hook runner.
    pub fn hooks(&self) -> &Arc<HookRunner> {
        &self.hooks
    }

    /// The single tool dispatch path.
    pub fn dispatcher(&self) -> &Arc<ToolDispatcher> {
        &self.dispatcher
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The tool budget of one turn, from `agents.defaults`.
    pub fn turn_budget(&self) -> clawhost_agent_core::TurnBudget {
        let d = &self.config.agents.defaults;
        clawhost_agent_core::TurnBudget {
            max_tool_calls: d.max_tool_calls_per_turn,
            max_result_bytes: d.max_tool_result_kb_per_turn.saturating_mul(1024),
        }
    }

    /// The built-in loop over `model`.
    pub fn turn_loop(&self, model: Arc<dyn ModelClient>) -> TurnLoop {
        let p = &self.config.agents.defaults.pruning;
        let pruning = clawhost_agent_core::Pruning {
            max_tool_result_chars: p.max_tool_result_chars,
            head_chars: p.head_chars,
            tail_chars: p.tail_chars,
            protect_recent_assistant_turns: p.protect_recent_assistant_turns,
        };
        TurnLoop::new(
            model,
            self.dispatcher.clone(),
            self.config.agents.defaults.max_iterations,
        )
        .with_pruning(pruning)
        .with_budget(self.turn_budget())
        .with_continue_on_max_tokens(
            self.config.agents.defaults.on_max_tokens == clawhost_config::OnMaxTokens::Continue,
        )
    }

    /// Run one turn of an agent on the generation it starts with: the model
    /// client is that generation's registry, kept to the end of the turn even
    /// if a newer generation is published meanwhile.
    pub async fn run_on_generation(
        &self,
        generation: Arc<ModelRuntimeGeneration>,
        ctx: &RunContext,
        history: &[SharedMessage],
        user: impl Into<UserInput>,
    ) -> Result<TurnOutcome, TurnError> {
        let user = user.into();
        let system = self.system_prompt(&generation.agent_id);
        self.run_builtin(&generation, ctx, history, (&user, &user.text), system)
            .await
    }

    /// The model client of a generation for one run, reporting each call
    /// to the model-call hooks.
    pub fn model_client(
        &self,
        generation: &ModelRuntimeGeneration,
        ctx: &RunContext,
    ) -> Arc<dyn ModelClient> {
        Arc::new(ObservedModel::new(
            generation.registry.clone(),
            self.hooks.clone(),
            ctx.run_id.clone(),
        ))
    }

    /// The built-in loop on the user's input; the model is sent `sent_text`
    /// for its text (with the prompt hooks' context).
    pub(crate) async fn run_builtin(
        &self,
        generation: &ModelRuntimeGeneration,
        ctx: &RunContext,
        history: &[SharedMessage],
        (user, sent_text): (&UserInput, &str),
        system: Option<String>,
    ) -> Result<TurnOutcome, TurnError> {
        let mut turn = self.turn_loop(self.model_client(generation, ctx));
        if let Some(system) = system {
            turn = turn.with_system(system);
        }
        turn.run_with_context(ctx, history, user, sent_text).await
    }

    /// Run one turn with the built-in loop.
    pub async fn run_turn(
        &self,
        model: Arc<dyn ModelClient>,
        ctx: &RunContext,
        history: &[SharedMessage],
        user_text: &str,
    ) -> Result<TurnOutcome, TurnError> {
        self.turn_loop(model).run(ctx, history, user_text).await
    }
}
