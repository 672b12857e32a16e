//! The plugin hook catalog and the hook runner.
//!
//! | hook | kind | merge rule | on handler failure |
//! |---|---|---|---|
//! | `before_tool_call` | modifying | sequential, descending priority; `block` is terminal; `rewrite` feeds the next handler | the call is blocked |
//! | `after_tool_call` | modifying | sequential, descending priority; each sees the previous result | the result is withheld (error result) |
//! | `before_prompt_build` | modifying | sequential; prepends/appends accumulate in order, the last system replacement wins | ignored (logged), the turn goes on |
//! | `before_compaction` | modifying | sequential; the first handler that supplies a summary wins | ignored (logged); the host summarizes |
//! | `session_start`, `session_end`, `llm_input`, `llm_output`, `after_compaction`, `agent_end` | observe | concurrent; awaited before the host goes on | ignored (logged) |
//!
//! Every plugin handler runs under the plugin's call deadline
//! (`plugins.limits.callTimeoutMs`); a timeout counts as a failure. Ties in
//! priority break by plugin id, so the order is deterministic.

mod catalog;
mod runner;

pub use catalog::{
    AfterCompactionEvent, AfterToolCallEvent, AfterToolCallOutcome, AgentEndEvent,
    BeforeCompactionEvent, BeforePromptBuildEvent, BeforeToolCallEvent, BeforeToolCallOutcome,
    CallContext, HookEvent, HookKind, HookOutcome, LlmInputEvent, LlmOutputEvent, PromptEdit,
    SessionEndEvent, SessionStartEvent,
};
pub use runner::{
    AfterToolCallResult, BeforeToolCallResult, BuiltPrompt, HookDecisionRecord, HookError,
    HookHandler, HookRegistration, HookRunner,
};
