//! The plugin hook catalog and the hook runner.
//!
//! The catalog mirrors OpenClaw's plugin SDK. Each hook is one row of the
//! hook table (`clawhost_config::hook_table!`), from which [`HookKind`] and
//! the typed [`HookEvent`] (borrowed from the runner) and [`HookOutcome`]
//! follow; CONTRIBUTING.md says how to add one. The runner applies its rules: modifying hooks run one after
//! another by descending priority (ties keep load order), observe-only hooks
//! run concurrently and can never block or change anything. Per hook:
//! `before_tool_call` (original params to every handler, the last
//! handler's rewritten params taken whole, terminal block, first
//! approval request wins and freezes the params, re-check of approvers),
//! `tool_result` middleware, `tool_result_persist` and `before_message_write`
//! ([`persist`](HookRunner::tool_result_persist)), `before_prompt_build`
//! (OpenClaw's context merge, shared by `agent_turn_prepare`),
//! `resolve_exec_env` ([`HookRunner::resolve_exec_env`]), `before_model_resolve`, `before_agent_start`
//! and the compaction-provider seam ([`HookRunner::before_model_resolve`]),
//! and the observe-only ones, some fired without waiting
//! ([`HookRunner::observe_detached`]). `docs/src/hooks.md` has the table.
//!
//! A failure is a trap, a timeout, a disabled plugin or an answer of the
//! wrong kind; the operator's fail policy (`plugins.entries.<id>.failPolicy`,
//! `plugins.entries.<id>.hooks.<hook>.failPolicy`) decides whether it skips
//! the handler (`ignore`) or stops what the hook guards (`block`).

mod catalog;
mod exec_env;
mod persist;
mod prompt;
mod run_events;
mod run_hooks;
mod runner;
mod shared_json;
mod turn_hooks;

pub use catalog::{
    AfterCompactionEvent, AfterToolCallEvent, AgentEndEvent, AgentStartEvent,
    ApprovalResolvedEvent, BeforeCompactionEvent, BeforePromptBuildEvent, BeforeResetEvent,
    BeforeToolCallEvent, BeforeToolCallOutcome, Blocked, CallContext, HookEvent, HookKind,
    HookOutcome, LlmInputEvent, LlmOutputEvent, MessageWriteEvent, MessageWriteOutcome, ModelCall,
    ModelCallEndedEvent, ModelOverride, ModelResolveEvent, PromptEdit, SessionEndEvent,
    SessionEndReason, SessionStartEvent, ToolResultOutcome, ToolResultPersistEvent,
};
pub use exec_env::{ExecEnvEvent, ExecEnvRun};
pub use persist::PersistRun;
pub use prompt::BuiltPrompt;
pub use run_hooks::{AgentStartRun, ModelResolveRun};
pub use runner::{
    BadToolPattern, BeforeToolCallResult, CompactionHookResult, FailPolicy, HookDecisionRecord,
    HookError, HookHandler, HookRegistration, HookRunner, Observed, ToolMatcher, ToolResultRun,
};
pub use shared_json::SharedJson;
pub use turn_hooks::{AgentFinalizeEvent, AgentRunEvent, FinalizeDecision, TurnHookRun};
