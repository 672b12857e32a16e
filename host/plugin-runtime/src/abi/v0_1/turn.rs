//! 0.1 harness types to and from the agent core's types.

use clawhost_agent_core::{
    Message, ModelResponse, Route, StopReason, Support, ToolCallRequest, ToolOutput,
    ToolResultMessage, ToolSpec,
};

use super::wit_turn as turn;
use crate::abi::{json_or_string, json_text};

pub(crate) fn tool_request(r: &ToolCallRequest) -> turn::ToolRequestResult {
    turn::ToolRequestResult {
        id: r.id.clone(),
        name: r.name.clone(),
        arguments: json_text(&r.arguments),
    }
}

pub(crate) fn from_tool_request(r: turn::ToolRequestResult) -> ToolCallRequest {
    ToolCallRequest {
        id: r.id,
        name: r.name,
        arguments: json_or_string(&r.arguments),
    }
}

crate::abi::outgoing::borrowed_conversions!(turn, turn, pub(crate));

pub(crate) fn from_message(m: turn::MessageResult) -> Message {
    match m {
        turn::MessageResult::User(text) => Message::user(text),
        turn::MessageResult::Assistant(a) => Message::Assistant {
            text: a.text,
            tool_calls: a.tool_calls.into_iter().map(from_tool_request).collect(),
            // Reasoning stays with the host: see `TurnMirror`.
            reasoning: Vec::new(),
        },
        turn::MessageResult::ToolResult(r) => Message::ToolResult(ToolResultMessage {
            call_id: r.call_id,
            tool: r.tool,
            content: r.content,
            is_error: r.is_error,
            images: Vec::new(),
        }),
    }
}

/// A tool the guest asked for, as it owns it.
pub(crate) fn tool_spec(t: &ToolSpec) -> turn::ToolSpecResult {
    turn::ToolSpecResult {
        name: t.name.clone(),
        description: t.description.clone(),
        parameters: json_text(&t.parameters),
    }
}

pub(crate) fn from_tool_spec(t: turn::ToolSpecResult) -> ToolSpec {
    ToolSpec {
        name: t.name,
        description: t.description,
        parameters: json_or_string(&t.parameters).into(),
    }
}

pub(crate) fn model_reply(r: &ModelResponse) -> turn::ModelReply {
    turn::ModelReply {
        text: r.text.clone(),
        tool_calls: r.tool_calls.iter().map(tool_request).collect(),
        stop_reason: match r.stop_reason {
            StopReason::EndTurn => "end-turn",
            StopReason::ToolUse => "tool-use",
            StopReason::MaxTokens => "max-tokens",
            // API 0.1 is frozen: a refusal reads as `other` there.
            StopReason::Refusal | StopReason::Other => "other",
        }
        .into(),
        input_tokens: r.usage.input_tokens,
        output_tokens: r.usage.output_tokens,
    }
}

pub(crate) fn tool_output(o: &ToolOutput) -> turn::ToolOutput {
    turn::ToolOutput {
        content: o.content.clone(),
        is_error: o.is_error,
    }
}

pub(crate) fn route(r: &Route) -> turn::Route<'_> {
    turn::Route {
        provider: &r.provider,
        model: &r.model,
        api: r.api.name(),
        base_url: &r.base_url,
    }
}

pub(crate) fn support(s: turn::Support) -> Support {
    match s {
        turn::Support::Supported((priority, reason)) => Support::Supported { priority, reason },
        turn::Support::Unsupported(reason) => Support::Unsupported(reason),
    }
}
