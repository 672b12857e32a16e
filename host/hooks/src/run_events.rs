//! Events of the hooks around a run (API 0.2.1 `run-hooks`): choosing the
//! model, starting, and each model call.

use clawhost_agent_core::{ModelErrorKind, Usage};

/// `before_model_resolve`: the model of a run is about to be resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResolveEvent {
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// The user's message.
    pub prompt: String,
    /// The configured provider.
    pub provider: String,
    /// The configured model.
    pub model: String,
}

/// Another provider and/or model for a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelOverride {
    /// Provider id (`None`: keep).
    pub provider: Option<String>,
    /// Model id (`None`: keep).
    pub model: Option<String>,
}

/// `before_agent_start`: a run is about to start.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentStartEvent {
    /// The run.
    pub run_id: String,
    /// Session id.
    pub session_id: Option<String>,
    /// Agent id.
    pub agent_id: String,
    /// The model the run will use.
    pub model_ref: String,
    /// The user's message.
    pub prompt: String,
}

/// `model_call_started`: one model call (metadata only).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// The run.
    pub run_id: String,
    /// The call's id within the run.
    pub call_id: String,
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Wire API name.
    pub api: String,
}

/// `model_call_ended`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCallEndedEvent {
    /// Which call.
    pub call: ModelCall,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// Its usage, or the kind of failure.
    pub outcome: Result<Usage, ModelErrorKind>,
}
