//! 0.2 shared types (messages, replies, errors) and harness types to and
//! from the agent core's types.

use clawhost_agent_core::{
    HarnessError, Message, ModelError, ModelErrorKind, ModelResponse, Route, StopReason, Support,
    ToolCallRequest, ToolOutput, ToolResultMessage, ToolSpec,
};
use clawhost_config::ApiKind;
use clawhost_hooks::CallContext;

use super::bindings::exports::openclaw::plugin::harness as hx;
use super::bindings::openclaw::plugin::agent_turn as at;
use super::wit;
use crate::abi::{json_or_string, json_text};

/// The run's context as the guest sees it, pointing into the host's.
pub(super) fn context(ctx: &CallContext) -> wit::CallContext<'_> {
    wit::CallContext {
        agent_id: &ctx.agent_id,
        session_id: ctx.session_id.as_deref(),
        model_ref: &ctx.model_ref,
    }
}

/// A plugin tool's error, case for case.
pub(super) fn tool_error(e: wit::ToolError) -> clawhost_agent_core::ToolError {
    match e {
        wit::ToolError::InvalidParams(m) => clawhost_agent_core::ToolError::InvalidParams(m),
        wit::ToolError::Failed(m) => clawhost_agent_core::ToolError::Failed(m),
    }
}

fn tool_request(r: &ToolCallRequest) -> wit::ToolRequestResult {
    wit::ToolRequestResult {
        id: r.id.clone(),
        name: r.name.clone(),
        arguments: json_text(&r.arguments),
    }
}

pub(super) fn from_tool_request(r: wit::ToolRequestResult) -> ToolCallRequest {
    ToolCallRequest {
        id: r.id,
        name: r.name,
        arguments: json_or_string(&r.arguments),
    }
}

crate::abi::outgoing::borrowed_conversions!(wit, hx, pub(super));

pub(super) fn from_message(m: wit::MessageResult) -> Message {
    match m {
        wit::MessageResult::User(text) => Message::user(text),
        wit::MessageResult::Assistant(a) => Message::Assistant {
            text: a.text,
            tool_calls: a.tool_calls.into_iter().map(from_tool_request).collect(),
            // Reasoning stays with the host: see `TurnMirror`.
            reasoning: Vec::new(),
        },
        wit::MessageResult::ToolResult(r) => Message::ToolResult(ToolResultMessage {
            call_id: r.call_id,
            tool: r.tool,
            content: r.content,
            is_error: r.is_error,
            images: Vec::new(),
        }),
    }
}

/// A tool the guest asked for, as it owns it.
pub(super) fn tool_spec(t: &ToolSpec) -> wit::ToolSpecResult {
    wit::ToolSpecResult {
        name: t.name.clone(),
        description: t.description.clone(),
        parameters: json_text(&t.parameters),
    }
}

pub(super) fn from_tool_spec(t: wit::ToolSpecResult) -> ToolSpec {
    ToolSpec {
        name: t.name,
        description: t.description,
        parameters: json_or_string(&t.parameters).into(),
    }
}

pub(super) fn model_reply(r: &ModelResponse) -> wit::ModelReply {
    wit::ModelReply {
        text: r.text.clone(),
        tool_calls: r.tool_calls.iter().map(tool_request).collect(),
        stop_reason: match r.stop_reason {
            StopReason::EndTurn => wit::StopReason::EndTurn,
            StopReason::ToolUse => wit::StopReason::ToolUse,
            StopReason::MaxTokens => wit::StopReason::MaxTokens,
            // The 0.2 enum is frozen: a refusal reads as `other` there.
            StopReason::Refusal | StopReason::Other => wit::StopReason::Other,
        },
        usage: wit::Usage {
            input_tokens: r.usage.input_tokens,
            output_tokens: r.usage.output_tokens,
        },
    }
}

pub(super) fn model_error(e: ModelError) -> wit::ModelError {
    use ModelErrorKind as K;
    let m = e.message;
    match e.kind {
        K::ContextOverflow => wit::ModelError::ContextOverflow(m),
        K::RateLimited => wit::ModelError::RateLimited(m),
        K::Auth => wit::ModelError::Auth(m),
        K::Timeout => wit::ModelError::Timeout(m),
        K::HookBlocked => wit::ModelError::Refused(m),
        K::Unavailable => wit::ModelError::Unavailable(m),
        K::UnknownModel | K::BadRequest | K::Protocol | K::Other => wit::ModelError::Other(m),
    }
}

fn from_model_error(e: wit::ModelError) -> ModelError {
    use ModelErrorKind as K;
    let (kind, m) = match e {
        wit::ModelError::ContextOverflow(m) => (K::ContextOverflow, m),
        wit::ModelError::RateLimited(m) => (K::RateLimited, m),
        wit::ModelError::Auth(m) => (K::Auth, m),
        wit::ModelError::Timeout(m) => (K::Timeout, m),
        wit::ModelError::Refused(m) => (K::HookBlocked, m),
        wit::ModelError::Unavailable(m) => (K::Unavailable, m),
        wit::ModelError::Other(m) => (K::Other, m),
    };
    ModelError::new(kind, m)
}

pub(super) fn model_request(r: at::ModelRequest) -> (Option<String>, Vec<Message>, Vec<ToolSpec>) {
    (
        r.system,
        r.messages.into_iter().map(from_message).collect(),
        r.tools.into_iter().map(from_tool_spec).collect(),
    )
}

pub(super) fn tool_output(o: &ToolOutput) -> at::ToolOutput {
    at::ToolOutput {
        content: o.content.clone(),
        is_error: o.is_error,
    }
}

/// The route in 0.2 terms; `None` when its wire API is newer than 0.2.
pub(super) fn route(r: &Route) -> Option<hx::Route<'_>> {
    let api = match r.api {
        ApiKind::OpenaiCompletions => wit::WireApi::OpenaiCompletions,
        ApiKind::OpenaiResponses => wit::WireApi::OpenaiResponses,
        ApiKind::AnthropicMessages => wit::WireApi::AnthropicMessages,
        ApiKind::Scripted => wit::WireApi::Scripted,
    };
    Some(hx::Route {
        provider: &r.provider,
        model: &r.model,
        api,
        base_url: &r.base_url,
    })
}

pub(super) fn support(s: hx::Support) -> Support {
    match s {
        hx::Support::Supported(c) => Support::Supported {
            priority: c.priority,
            reason: c.reason,
        },
        hx::Support::Unsupported(reason) => Support::Unsupported(reason),
    }
}

pub(super) fn attempt_error_len(e: &hx::AttemptError) -> usize {
    match e {
        hx::AttemptError::Failed(m) => m.len(),
        hx::AttemptError::Model(
            wit::ModelError::ContextOverflow(m)
            | wit::ModelError::RateLimited(m)
            | wit::ModelError::Auth(m)
            | wit::ModelError::Timeout(m)
            | wit::ModelError::Refused(m)
            | wit::ModelError::Unavailable(m)
            | wit::ModelError::Other(m),
        ) => m.len(),
    }
}

pub(super) fn attempt_error(e: hx::AttemptError) -> HarnessError {
    match e {
        hx::AttemptError::Model(m) => HarnessError::Model(from_model_error(m)),
        hx::AttemptError::Failed(m) => HarnessError::Failed(m),
    }
}
