//! The plugin hook catalog and the hook runner.
//!
//! | hook | kind | merge rule | default fail policy: on handler failure |
//! |---|---|---|---|
//! | `before_tool_call` | modifying | sequential, descending priority; `block` is terminal; `rewrite` feeds the next handler | `block`: the call is blocked |
//! | `after_tool_call` | modifying | sequential, descending priority; each sees the previous result | `block`: the result is withheld (error result) |
//! | `before_prompt_build` | modifying | sequential; prepends/appends accumulate in order, the last system replacement wins | `ignore`: logged, the turn goes on |
//! | `before_compaction` | modifying | sequential; the first handler that supplies a summary wins | `ignore`: logged; the host summarizes |
//! | `session_start`, `session_end`, `llm_input`, `llm_output`, `after_compaction`, `agent_end` | observe | concurrent; awaited before the host goes on | `ignore`: logged |
//!
//! A failure is a trap, a timeout, a disabled plugin or an answer of the wrong
//! kind. Operators set the policy per plugin (`plugins.entries.<id>.failPolicy`)
//! and per hook (`plugins.entries.<id>.hooks.<hook>.failPolicy`, which wins):
//! `ignore` skips the failed handler; `block` stops what the hook guards — a
//! tool call is blocked, a result withheld, and for the other hooks the turn
//! (or the session start, the model call, the compaction) ends with an error
//! naming the hook and plugin.
//!
//! Every plugin handler runs under the plugin's call deadline
//! (`plugins.limits.callTimeoutMs`, or `plugins.entries.<id>.hooks.<hook>.timeoutMs`);
//! a timeout counts as a failure. Ties in priority break by plugin id, so the
//! order is deterministic.

mod catalog;
mod persist;
mod run_events;
mod run_hooks;
mod runner;

pub use catalog::{
    AfterCompactionEvent, AfterToolCallEvent, AgentEndEvent, AgentStartEvent,
    ApprovalResolvedEvent, BeforeCompactionEvent, BeforePromptBuildEvent, BeforeResetEvent,
    BeforeToolCallEvent, BeforeToolCallOutcome, CallContext, HookEvent, HookKind, HookOutcome,
    LlmInputEvent, LlmOutputEvent, MessageWriteEvent, MessageWriteOutcome, ModelCall,
    ModelCallEndedEvent, ModelOverride, ModelResolveEvent, PromptEdit, SessionEndEvent,
    SessionEndReason, SessionStartEvent, ToolResultOutcome, ToolResultPersistEvent,
};
pub use persist::PersistRun;
pub use run_hooks::{AgentStartRun, ModelResolveRun};
pub use runner::{
    BeforeToolCallResult, BuiltPrompt, CompactionHookResult, FailPolicy, HookDecisionRecord,
    HookError, HookHandler, HookRegistration, HookRunner, Observed, ToolMatcher, ToolResultRun,
};
