//! 0.1 harness types to and from the agent core's types.

use clawhost_agent_core::{
    Message, ModelResponse, PreparedTurn, Route, StopReason, Support, ToolCallRequest, ToolOutput,
    ToolResultMessage, ToolSpec,
};

use super::wit_turn as turn;
use crate::abi::json_or_string;

pub(crate) fn tool_request(r: &ToolCallRequest) -> turn::ToolRequest {
    turn::ToolRequest {
        id: r.id.clone(),
        name: r.name.clone(),
        arguments: r.arguments.to_string(),
    }
}

pub(crate) fn from_tool_request(r: turn::ToolRequest) -> ToolCallRequest {
    ToolCallRequest {
        id: r.id,
        name: r.name,
        arguments: json_or_string(&r.arguments),
    }
}

pub(crate) fn message(m: &Message) -> turn::Message {
    match m {
        Message::User { text, .. } => turn::Message::User(text.clone()),
        Message::Assistant {
            text, tool_calls, ..
        } => turn::Message::Assistant(turn::AssistantMessage {
            text: text.clone(),
            tool_calls: tool_calls.iter().map(tool_request).collect(),
        }),
        Message::ToolResult(r) => turn::Message::ToolResult(turn::ToolResultMessage {
            call_id: r.call_id.clone(),
            tool: r.tool.clone(),
            content: r.content.clone(),
            is_error: r.is_error,
        }),
    }
}

pub(crate) fn from_message(m: turn::Message) -> Message {
    match m {
        turn::Message::User(text) => Message::user(text),
        turn::Message::Assistant(a) => Message::Assistant {
            text: a.text,
            tool_calls: a.tool_calls.into_iter().map(from_tool_request).collect(),
            // Reasoning stays with the host: see `TurnMirror`.
            reasoning: Vec::new(),
        },
        turn::Message::ToolResult(r) => Message::ToolResult(ToolResultMessage {
            call_id: r.call_id,
            tool: r.tool,
            content: r.content,
            is_error: r.is_error,
            images: Vec::new(),
        }),
    }
}

pub(crate) fn tool_spec(t: &ToolSpec) -> turn::ToolSpec {
    turn::ToolSpec {
        name: t.name.clone(),
        description: t.description.clone(),
        parameters: t.parameters.to_string(),
    }
}

pub(crate) fn from_tool_spec(t: turn::ToolSpec) -> ToolSpec {
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

pub(crate) fn route(r: &Route) -> turn::Route {
    turn::Route {
        provider: r.provider.clone(),
        model: r.model.clone(),
        api: r.api.name().into(),
        base_url: r.base_url.clone(),
    }
}

pub(crate) fn support(s: turn::Support) -> Support {
    match s {
        turn::Support::Supported((priority, reason)) => Support::Supported { priority, reason },
        turn::Support::Unsupported(reason) => Support::Unsupported(reason),
    }
}

pub(crate) fn prepared(t: &PreparedTurn) -> turn::PreparedTurn {
    turn::PreparedTurn {
        agent_id: t.agent_id.clone(),
        session_id: t.session_id.clone(),
        model_ref: t.model_ref.clone(),
        system: t.system.clone(),
        history: t.history.iter().map(|m| message(m)).collect(),
        user_text: t.user_text.clone(),
        tools: t.tools.iter().map(tool_spec).collect(),
        max_iterations: t.max_iterations,
    }
}
