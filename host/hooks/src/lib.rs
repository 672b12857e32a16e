//! The plugin hook catalog and the hook runner.
//!
//! | hook | kind | merge rule | on handler failure |
//! |---|---|---|---|
//! | `before_tool_call` | modifying | sequential, descending priority; `block` is terminal; `rewrite` feeds the next handler | the call is blocked |
//! | `after_tool_call` | modifying | sequential, descending priority; each sees the previous result | the result is withheld (error result) |
//!
//! Ties in priority break by plugin id, so the order is deterministic.

mod catalog;
mod runner;

pub use catalog::{
    AfterToolCallEvent, AfterToolCallOutcome, BeforeToolCallEvent, BeforeToolCallOutcome,
    CallContext, HookEvent, HookKind, HookOutcome,
};
pub use runner::{
    AfterToolCallResult, BeforeToolCallResult, HookDecisionRecord, HookError, HookHandler,
    HookRegistration, HookRunner,
};
