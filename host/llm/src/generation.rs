//! Model runtime generations: per agent, one immutable snapshot of auth
//! templates, the model registry and the projected catalog, numbered and
//! published atomically.
//!
//! Builds are serialized and a generation is published only when it is
//! complete, so readers see either the previous whole set or the new whole
//! set, never a mix; a build that fails is not published (the previous set
//! keeps serving) and its error is kept for status.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;
use clawhost_config::Config;

use crate::auth::AuthTemplate;
use crate::registry::{CatalogEntry, ModelRegistry};

/// One agent's snapshot.
#[derive(Debug)]
pub struct ModelRuntimeGeneration {
    /// Generation number (shared by all agents of one build).
    pub number: u64,
    /// Agent id.
    pub agent_id: String,
    /// The agent's model ref.
    pub model: String,
    /// Discovered auth templates.
    pub auth: Vec<AuthTemplate>,
    /// The model registry (also the agent's model client).
    pub registry: Arc<ModelRegistry>,
    /// The projected catalog.
    pub catalog: Vec<CatalogEntry>,
}

impl ModelRuntimeGeneration {
    /// The same snapshot, running `model` (a ref its registry resolves) for
    /// one run, as a `before_model_resolve` hook asked.
    pub fn with_model(&self, model: String) -> Self {
        Self {
            number: self.number,
            agent_id: self.agent_id.clone(),
            model,
            auth: self.auth.clone(),
            registry: self.registry.clone(),
            catalog: self.catalog.clone(),
        }
    }
}

/// Every agent's snapshot of one build.
#[derive(Debug)]
pub struct GenerationSet {
    /// Generation number.
    pub number: u64,
    /// Snapshots by agent id.
    pub agents: BTreeMap<String, Arc<ModelRuntimeGeneration>>,
}

/// Why a generation was not published.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("model runtime generation {number} failed: {reason}")]
pub struct GenerationError {
    /// The number the failed build had.
    pub number: u64,
    /// What went wrong.
    pub reason: String,
}

/// The published generations, and the builder that replaces them.
#[derive(Debug, Default)]
pub struct ModelRuntimes {
    published: ArcSwapOption<GenerationSet>,
    next_number: AtomicU64,
    build: Mutex<()>,
    last_error: Mutex<Option<GenerationError>>,
}

impl ModelRuntimes {
    /// No generation yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Build a generation from `config` and publish it if it is whole.
    pub fn rebuild(&self, config: &Config) -> Result<Arc<GenerationSet>, GenerationError> {
        let _serialized = clawhost_agent_core::lock(&self.build);
        let number = self.next_number.fetch_add(1, Ordering::SeqCst) + 1;
        match build(number, config) {
            Ok(set) => {
                let set = Arc::new(set);
                self.published.store(Some(set.clone()));
                *clawhost_agent_core::lock(&self.last_error) = None;
                tracing::info!(generation = number, "model runtime generation published");
                Ok(set)
            }
            Err(error) => {
                tracing::error!(%error, "model runtime generation not published; previous one keeps serving");
                self.record_failure(error.clone());
                Err(error)
            }
        }
    }

    /// Record a failure that happened before a build could start (e.g. the
    /// config file does not parse).
    pub fn record_failure(&self, error: GenerationError) {
        *clawhost_agent_core::lock(&self.last_error) = Some(error);
    }

    /// Take a number for a failure recorded outside [`Self::rebuild`].
    pub fn next_number(&self) -> u64 {
        self.next_number.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The published set.
    pub fn snapshot(&self) -> Option<Arc<GenerationSet>> {
        self.published.load_full()
    }

    /// One agent's published snapshot.
    pub fn current(&self, agent_id: &str) -> Option<Arc<ModelRuntimeGeneration>> {
        self.published
            .load()
            .as_ref()
            .and_then(|s| s.agents.get(agent_id).cloned())
    }

    /// The last failed build, if the latest attempt failed.
    pub fn last_error(&self) -> Option<GenerationError> {
        clawhost_agent_core::lock(&self.last_error).clone()
    }
}

fn build(number: u64, config: &Config) -> Result<GenerationSet, GenerationError> {
    let failed = |reason: String| GenerationError { number, reason };
    let registry = Arc::new(ModelRegistry::build(config).map_err(|e| failed(e.to_string()))?);
    let auth = registry.auth_templates();
    let catalog = registry.catalog();
    let mut agents = BTreeMap::new();
    for id in config.agents.ids() {
        let settings = config
            .agents
            .settings(&id)
            .ok_or_else(|| failed(format!("agent `{id}` has no settings")))?;
        registry.resolve(&settings.model).map_err(|e| {
            failed(format!(
                "agent `{id}`: model `{}`: {}",
                settings.model, e.message
            ))
        })?;
        agents.insert(
            id.clone(),
            Arc::new(ModelRuntimeGeneration {
                number,
                agent_id: id,
                model: settings.model,
                auth: auth.clone(),
                registry: registry.clone(),
                catalog: catalog.clone(),
            }),
        );
    }
    Ok(GenerationSet { number, agents })
}
