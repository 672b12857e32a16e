//! Agent core: messages, the model and tool contracts, run context and events,
//! and the turn loop that ties them together.

mod approval;
mod budget;
mod compaction;
mod events;
mod harness;
mod image;
mod lock;
mod message;
mod model;
mod reasoning;
mod restore;
mod shared_message;
pub mod text;
mod tool;
mod turn;

pub use approval::{
    ApprovalDecision, ApprovalRequest, Approvals, Approver, FixedApprover, PendingApproval,
    Severity, TimeoutBehavior,
};
pub use budget::{BudgetedTools, TurnBudget};
pub use compaction::{estimate_tokens, message_tokens, plan_cut, Pruning};
pub use events::{messages_of_last_turn, EventSink, TurnEvent};
pub use harness::{
    CompactionObserver, Harness, HarnessError, NativeCompaction, PreparedTurn, Route, Support,
    ToolEndpoint, ToolEndpoints, TurnMirror, TurnServices, TurnStopped,
};
pub use image::{
    images_note, sniff as sniff_image, Image, ImageError, MAX_IMAGES_PER_MESSAGE, MAX_IMAGE_BYTES,
};
pub use lock::lock;
pub use message::{Message, ToolCallRequest, ToolResultMessage, UserInput};
pub use model::{
    ModelClient, ModelError, ModelErrorKind, ModelRequest, ModelResponse, StopReason, TextSink,
    Usage,
};
pub use reasoning::{Reasoning, ReasoningBlock};
pub use shared_message::{CountTokens, SharedMessage};
pub use tool::{Refused, RunContext, ToolError, ToolExecutor, ToolOutput, ToolSpec};
pub use turn::{TurnError, TurnLoop, TurnOutcome, CONTINUE_PROMPT};
