//! The composition root every entry point shares (`run`, `chat`, the
//! gateway): the published model runtime generations, the wired runner
//! (plugins, tools, hooks), the session store and its lanes, and reload.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context};
use arc_swap::ArcSwap;
use clawhost_agent_core::{Message, RunContext, TurnOutcome};
use clawhost_config::Config;
use clawhost_llm::{GenerationSet, ModelRuntimeGeneration, ModelRuntimes};
use clawhost_plugin_runtime::LoadReport;
use clawhost_sessions::{SessionError, SessionLanes, SessionStore};

use crate::{EmbeddedRunner, PersistError, Session};

/// One turn asked of the host.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// Agent id.
    pub agent: String,
    /// The stored session to continue; `None` starts a new one.
    pub session: Option<String>,
    /// The user's message.
    pub message: String,
    /// Images attached to it.
    pub images: Vec<clawhost_agent_core::Image>,
    /// A model ref to run instead of the agent's (`/model`, a gateway request).
    pub model: Option<String>,
}

/// What a turn produced, and where it was stored.
#[derive(Debug)]
pub struct TurnReply {
    /// The session the turn was stored in.
    pub session_id: String,
    /// The turn's outcome.
    pub outcome: TurnOutcome,
    /// The session after the turn.
    pub session: Session,
}

/// Why a turn could not run or failed.
#[derive(Debug, thiserror::Error)]
pub enum HostTurnError {
    /// The agent is not configured.
    #[error("agent `{0}` is not configured (agents.list)")]
    UnknownAgent(String),
    /// The model asked for does not resolve in the current generation.
    #[error("{0}")]
    Model(#[from] clawhost_agent_core::ModelError),
    /// The session asked for could not be opened, or a new one created.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The turn failed or was aborted; the session was stored as far as it
    /// got (see [`PersistError`]).
    #[error("{error}")]
    Turn {
        /// The session the turn ran in.
        session_id: String,
        /// What went wrong.
        #[source]
        error: PersistError,
    },
}

/// What a reload published.
#[derive(Debug)]
pub struct ReloadReport {
    /// The generation number now serving.
    pub generation: u64,
    /// Plugins that loaded or were refused, as at start.
    pub plugins: Vec<LoadReport>,
}

/// What serves turns, published as one: the wired runner and the generation
/// set built from the same config. A turn takes both from one snapshot, so
/// it never pairs a new generation with the runner of an old config.
struct Published {
    runner: Arc<EmbeddedRunner>,
    generations: Arc<GenerationSet>,
}

/// A change applied to the config each time it is read for a reload (the
/// CLI's `--plugin` dev packages); an error fails that reload.
pub type ConfigOverlay = Arc<dyn Fn(&mut Config) -> anyhow::Result<()> + Send + Sync>;

/// The agent host: one per process.
pub struct AgentHost {
    config_path: Option<PathBuf>,
    overlay: Option<ConfigOverlay>,
    runtimes: Arc<ModelRuntimes>,
    published: ArcSwap<Published>,
    store: SessionStore,
    lanes: SessionLanes,
    reloading: tokio::sync::Mutex<()>,
    last_reload_error: Mutex<Option<String>>,
}

/// The session store of `config`: PostgreSQL when `sessions.store` names
/// one (connected and migrated now), else the files, moved from where an
/// older version kept them (that place is returned when they moved).
pub async fn open_store(config: &Config) -> anyhow::Result<(SessionStore, Option<PathBuf>)> {
    if let Some(url) = &config.sessions.store {
        anyhow::ensure!(
            clawhost_sessions_postgres::is_postgres_url(url),
            "sessions.store must be a postgres:// URL (unset: the files under sessions.dir)"
        );
        let db = clawhost_sessions_postgres::PostgresBackend::connect(url, config.sessions.pool)
            .await
            .context("opening the session store (sessions.store)")?;
        return Ok((SessionStore::with_backend(Arc::new(db)), None));
    }
    let store = SessionStore::new(config.sessions_dir()).with_fsync(config.sessions.fsync);
    let moved = match config.legacy_sessions_dir() {
        Some(old) if store.adopt(&old).context("moving the sessions")? => Some(old),
        _ => None,
    };
    Ok((store, moved))
}

impl AgentHost {
    /// Build the first generation and wire the plugins of `config`;
    /// `config_path` is re-read on [`AgentHost::reload`] (`None`: reload
    /// is refused).
    pub async fn start(
        config: Config,
        config_path: Option<PathBuf>,
    ) -> anyhow::Result<(Self, Vec<LoadReport>)> {
        let runtimes = Arc::new(ModelRuntimes::new());
        let generations = runtimes
            .rebuild(&config)
            .context("building the model runtime generation")?;
        let (store, moved) = open_store(&config).await?;
        if let Some(old) = moved {
            tracing::info!(from = %old.display(), to = %config.sessions_dir().display(), "sessions moved");
        }
        let lanes = SessionLanes::shared(store.backend().clone());
        let (runner, reports) = EmbeddedRunner::start(config).await?;
        let host = Self {
            config_path,
            overlay: None,
            runtimes,
            published: ArcSwap::from_pointee(Published {
                runner: Arc::new(runner.with_lanes(lanes.clone())),
                generations,
            }),
            store,
            lanes,
            reloading: tokio::sync::Mutex::new(()),
            last_reload_error: Mutex::new(None),
        };
        Ok((host, reports))
    }

    /// Apply `overlay` to the config each reload reads (the caller applied
    /// it to the config this host started with).
    pub fn with_overlay(mut self, overlay: ConfigOverlay) -> Self {
        self.overlay = Some(overlay);
        self
    }

    /// The runner now serving. A turn keeps the one it started with.
    pub fn runner(&self) -> Arc<EmbeddedRunner> {
        self.published.load().runner.clone()
    }

    /// The generation of an agent now serving.
    pub fn generation(&self, agent: &str) -> Option<Arc<ModelRuntimeGeneration>> {
        self.published.load().generations.agents.get(agent).cloned()
    }

    /// Every agent's generation now serving.
    pub fn generations(&self) -> Arc<GenerationSet> {
        self.published.load().generations.clone()
    }

    /// The session store.
    pub fn store(&self) -> &SessionStore {
        &self.store
    }

    /// Why the last reload failed, if it did (cleared by a good one).
    pub fn last_reload_error(&self) -> Option<String> {
        clawhost_agent_core::lock(&self.last_reload_error).clone()
    }

    /// Re-read the config file and publish a complete new generation: the
    /// plugins are loaded and wired again (changed packages re-admitted), then
    /// the model runtimes rebuilt. Turns in flight finish on what they
    /// started with. On failure nothing is published, the old generation
    /// keeps serving, and the reason is kept for [`Self::last_reload_error`].
    pub async fn reload(&self) -> anyhow::Result<ReloadReport> {
        let _one_at_a_time = self.reloading.lock().await;
        let result = self.reload_inner().await;
        *clawhost_agent_core::lock(&self.last_reload_error) =
            result.as_ref().err().map(|e| format!("{e:#}"));
        result
    }

    async fn reload_inner(&self) -> anyhow::Result<ReloadReport> {
        let path = self
            .config_path
            .as_deref()
            .ok_or_else(|| anyhow!("this host was started without a config file to reload"))?;
        let mut config = Config::load(path)?;
        if let Some(overlay) = &self.overlay {
            overlay(&mut config)?;
        }
        self.publish(config, None).await
    }

    /// Build a new generation of the config in force when an MCP server
    /// said its tools changed (the runner then lists them again); a failure
    /// is logged and the old generation keeps serving.
    async fn refresh_stale_tools(&self) {
        let _one_at_a_time = self.reloading.lock().await;
        let runner = self.runner();
        if !runner.mcp_stale() {
            return;
        }
        tracing::info!("an MCP server's tools changed: building a new generation");
        let config = runner.config().clone();
        if let Err(e) = self.publish(config, Some(&runner)).await {
            tracing::warn!(error = %format!("{e:#}"), "the new generation for changed MCP tools failed");
        }
    }

    /// Wire `config` and publish it with freshly built model runtimes;
    /// `relist`: keep that runner's MCP connections, listing their tools again.
    async fn publish(
        &self,
        config: Config,
        relist: Option<&EmbeddedRunner>,
    ) -> anyhow::Result<ReloadReport> {
        let (runner, plugins) = match relist {
            Some(old) => old.relisted().await?,
            None => EmbeddedRunner::start(config.clone()).await?,
        };
        let generations = match self.runtimes.rebuild(&config) {
            Ok(set) => set,
            Err(e) => {
                runner.harnesses().dispose_all().await;
                return Err(anyhow!(e).context("building the model runtime generation"));
            }
        };
        let number = generations.number;
        let old = self
            .published
            .swap(Arc::new(Published {
                runner: Arc::new(runner.with_lanes(self.lanes.clone())),
                generations,
            }))
            .runner
            .clone();
        // The old runner's harnesses go once the last turn on it lets go.
        tokio::spawn(async move {
            while Arc::strong_count(&old) > 1 {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            old.harnesses().dispose_all().await;
        });
        Ok(ReloadReport {
            generation: number,
            plugins,
        })
    }

    /// Create a session holding `history` (a client that resends the whole
    /// conversation starts one this way), and fire `session_start`.
    pub async fn create_session(
        &self,
        agent: &str,
        history: &[Message],
    ) -> Result<String, SessionError> {
        let mut transcript = self.store.create(agent, None)?;
        for message in history {
            transcript.append_message(message.clone())?;
        }
        if !history.is_empty() {
            self.store.commit(agent, &mut transcript)?;
        }
        let id = transcript.id().to_string();
        self.runner().start_session(&id, agent, false).await;
        Ok(id)
    }

    /// Run one turn: in the session asked for (a new one when `None`,
    /// created only now that there is a message), in its lane, on the
    /// runner and generation current as it starts, with every hook, and
    /// stored as it went (an aborted or failed turn too).
    pub async fn run_turn(
        &self,
        request: &TurnRequest,
        ctx: &RunContext,
    ) -> Result<TurnReply, HostTurnError> {
        use tracing::Instrument;
        let span = tracing::info_span!("turn", agent = %request.agent, run = %ctx.run_id);
        self.run_turn_traced(request, ctx).instrument(span).await
    }

    async fn run_turn_traced(
        &self,
        request: &TurnRequest,
        ctx: &RunContext,
    ) -> Result<TurnReply, HostTurnError> {
        let agent = request.agent.as_str();
        if self.published.load().runner.mcp_stale() {
            self.refresh_stale_tools().await;
        }
        let published = self.published.load_full();
        let generation = published
            .generations
            .agents
            .get(agent)
            .cloned()
            .ok_or_else(|| HostTurnError::UnknownAgent(agent.into()))?;
        let generation = match &request.model {
            Some(model) if *model != generation.model => {
                generation.registry.resolve(model)?;
                Arc::new(generation.with_model(model.clone()))
            }
            _ => generation,
        };
        let runner = published.runner.clone();
        let session_id = match &request.session {
            Some(id) => {
                self.store.exists(agent, id)?;
                id.clone()
            }
            None => self.create_session(agent, &[]).await?,
        };
        let mut ctx = ctx.clone();
        ctx.model_ref = generation.model.clone();
        let (outcome, session) = runner
            .run_persisted_turn(
                &self.store,
                agent,
                &session_id,
                generation,
                &ctx,
                clawhost_agent_core::UserInput {
                    text: request.message.clone(),
                    images: request.images.clone(),
                },
            )
            .await
            .map_err(|error| match error {
                // The store failed (unreachable, changed by another writer):
                // said as such, whenever in the turn it happened.
                PersistError::Store(e) => HostTurnError::Session(e),
                error => HostTurnError::Turn {
                    session_id: session_id.clone(),
                    error,
                },
            })?;
        Ok(TurnReply {
            session_id,
            outcome,
            session,
        })
    }
}

#[cfg(test)]
#[path = "agent_host_tests.rs"]
mod tests;
