//! Example harness (agent runtime) plugin: plan, then act.
//!
//! A turn first asks the model for a plan (no tools offered; the reply is
//! read as it streams), then loops: model call with tools → tool calls →
//! results, until the model answers. Every model call goes through the
//! host's transport and every tool call through the host's dispatch path
//! (policy and hooks apply), by way of the `turn` the host hands in.
//!
//! Config (`plugins.entries.plan-act.config`):
//! `{ "providers": ["scripted", ...], "priority": 50 }`: routes whose provider
//! is listed are supported (default: `scripted`).

use std::cell::RefCell;
use std::collections::BTreeMap;

use clawhost_sdk::{
    config, export_harness, log, AssistantMessage, AttemptError, Claim, Harness, Level, Message,
    ModelRequest, PreparedTurn, Route, Support, ToolResultMessage, Turn,
};

const PLAN_PROMPT: &str =
    "First write a short numbered plan of the tool calls you will make. Do not call tools yet.";

#[derive(Default)]
struct PlanAct {
    /// Turns run per session, kept to show `reset` reaching the harness.
    turns: RefCell<BTreeMap<String, u32>>,
}

impl Harness for PlanAct {
    fn id(&self) -> String {
        "plan-act".into()
    }

    fn supports(&self, route: Route) -> Support {
        let config = config();
        let providers: Vec<String> = config["providers"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_else(|| vec!["scripted".into()]);
        let priority = config["priority"].as_i64().unwrap_or(50) as i32;
        if providers.contains(&route.provider) {
            Support::Supported(Claim {
                priority,
                reason: format!("provider `{}` is configured for plan-act", route.provider),
            })
        } else {
            Support::Unsupported(format!(
                "provider `{}` is not in plan-act's providers",
                route.provider
            ))
        }
    }

    fn run_attempt(&self, turn: &Turn, prepared: PreparedTurn) -> Result<String, AttemptError> {
        if let Some(session) = &prepared.session_id {
            *self.turns.borrow_mut().entry(session.clone()).or_default() += 1;
        }
        let mut messages = prepared.history.clone();
        messages.push(Message::User(prepared.user_text.clone()));
        let base = prepared.system.clone().unwrap_or_default();
        let stream = turn.complete_streaming(&ModelRequest {
            system: Some(format!("{base}\n{PLAN_PROMPT}")),
            messages: messages.clone(),
            tools: vec![],
        });
        let mut pieces = 0;
        while stream.next().is_some() {
            pieces += 1;
        }
        let plan = stream.finish()?;
        log(
            Level::Info,
            &format!("plan ({pieces} streamed pieces): {}", plan.text),
        );
        messages.push(Message::Assistant(AssistantMessage {
            text: plan.text.clone(),
            tool_calls: vec![],
        }));
        let request = |messages: &[Message]| ModelRequest {
            system: Some(format!("{base}\nFollow your plan:\n{}", plan.text)),
            messages: messages.to_vec(),
            tools: turn.tools(),
        };
        for _ in 1..prepared.max_iterations {
            let reply = turn.complete(&request(&messages))?;
            messages.push(Message::Assistant(AssistantMessage {
                text: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
            }));
            if reply.tool_calls.is_empty() {
                return Ok(reply.text);
            }
            for call in reply.tool_calls {
                let out = turn.call_tool(&call);
                messages.push(Message::ToolResult(ToolResultMessage {
                    call_id: call.id,
                    tool: call.name,
                    content: out.content,
                    is_error: out.is_error,
                }));
            }
        }
        Err(AttemptError::Failed(format!(
            "no final answer within {} model calls",
            prepared.max_iterations
        )))
    }

    fn reset(&self, session_id: &str) {
        let turns = self.turns.borrow_mut().remove(session_id).unwrap_or(0);
        log(
            Level::Info,
            &format!("reset session {session_id} after {turns} turns"),
        );
    }

    fn dispose(&self) {
        self.turns.borrow_mut().clear();
    }
}

export_harness!(PlanAct);
