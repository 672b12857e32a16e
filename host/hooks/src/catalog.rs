//! Typed hook events and outcomes (the host side of the WIT `types` interface).

use serde_json::Value;

/// Hooks a plugin can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookKind {
    /// Before a tool runs.
    BeforeToolCall,
    /// After a tool ran.
    AfterToolCall,
}

impl HookKind {
    /// The hook's catalog name.
    pub fn name(self) -> &'static str {
        match self {
            HookKind::BeforeToolCall => "before_tool_call",
            HookKind::AfterToolCall => "after_tool_call",
        }
    }
}

/// The run a hook event belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct CallContext {
    /// Agent id.
    pub agent_id: String,
    /// Session id, if any.
    pub session_id: Option<String>,
    /// Model reference.
    pub model_ref: String,
}

/// `before_tool_call`: a tool is about to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeToolCallEvent {
    /// Tool name.
    pub tool: String,
    /// Call id.
    pub call_id: String,
    /// Parameters as they stand.
    pub params: Value,
    /// The plugin providing the tool (`None` for host tools).
    pub tool_plugin: Option<String>,
    /// The run.
    pub context: CallContext,
}

/// A `before_tool_call` decision.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolCallOutcome {
    /// Go on.
    Allow,
    /// Stop the call with this reason.
    Block(String),
    /// Go on with these parameters.
    Rewrite(Value),
}

/// `after_tool_call`: a tool ran.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterToolCallEvent {
    /// Tool name.
    pub tool: String,
    /// Call id.
    pub call_id: String,
    /// Parameters the tool ran with.
    pub params: Value,
    /// Result or error message as it stands.
    pub outcome: Result<Value, String>,
    /// How long the tool ran.
    pub duration_ms: u64,
    /// The run.
    pub context: CallContext,
}

/// An `after_tool_call` decision.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterToolCallOutcome {
    /// Keep the result.
    Keep,
    /// Replace it.
    Replace(Result<Value, String>),
}

/// An event delivered to a handler.
#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    /// See [`BeforeToolCallEvent`].
    BeforeToolCall(BeforeToolCallEvent),
    /// See [`AfterToolCallEvent`].
    AfterToolCall(AfterToolCallEvent),
}

impl HookEvent {
    /// Which hook this event is for.
    pub fn kind(&self) -> HookKind {
        match self {
            HookEvent::BeforeToolCall(_) => HookKind::BeforeToolCall,
            HookEvent::AfterToolCall(_) => HookKind::AfterToolCall,
        }
    }
}

/// A handler's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// Answer to `before_tool_call`.
    BeforeToolCall(BeforeToolCallOutcome),
    /// Answer to `after_tool_call`.
    AfterToolCall(AfterToolCallOutcome),
}
