//! Example harness (agent runtime) plugin: plan, then act.
//!
//! A turn first asks the model for a plan (no tools offered), then loops:
//! model call with tools → tool calls → results, until the model answers.
//! Every model call goes through the host's transport and every tool call
//! through the host's dispatch path (policy and hooks apply).
//!
//! Config (`plugins.entries.plan-act.config`):
//! `{ "providers": ["scripted", ...], "priority": 50 }`: routes whose provider
//! is listed are supported (default: `scripted`).

wit_bindgen::generate!({ world: "harness-plugin", path: "../../wit" });

use std::cell::RefCell;
use std::collections::BTreeMap;

use exports::openclaw::plugin::harness::Guest as HarnessGuest;
use exports::openclaw::plugin::plugin::Guest as PluginGuest;
use openclaw::plugin::turn_types::{AssistantMessage, Message, PreparedTurn, Route, Support, ToolResultMessage};
use openclaw::plugin::types::{
    AfterToolCallOutcome, BeforeToolCallOutcome, HookEvent, HookOutcome, Registration, ToolCall,
};
use openclaw::plugin::{host, model, tools};

const PLAN_PROMPT: &str = "First write a short numbered plan of the tool calls you will make. Do not call tools yet.";

thread_local! {
    /// Turns run per session, kept to show `reset` reaching the harness.
    static TURNS: RefCell<BTreeMap<String, u32>> = const { RefCell::new(BTreeMap::new()) };
}

struct PlanAct;

fn config() -> serde_json::Value {
    serde_json::from_str(&host::config()).unwrap_or(serde_json::Value::Null)
}

impl PluginGuest for PlanAct {
    fn register() -> Registration {
        Registration {
            id: "plan-act".into(),
            version: "0.1.0".into(),
            tools: vec![],
            hooks: vec![],
            harnesses: vec!["plan-act".into()],
        }
    }

    fn call_tool(call: ToolCall) -> Result<String, String> {
        Err(format!("plan-act provides no tool `{}`", call.tool))
    }

    fn handle_hook(event: HookEvent) -> HookOutcome {
        match event {
            HookEvent::BeforeToolCall(_) => HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Allow),
            HookEvent::AfterToolCall(_) => HookOutcome::AfterToolCall(AfterToolCallOutcome::Keep),
            _ => HookOutcome::Observed,
        }
    }
}

impl HarnessGuest for PlanAct {
    fn supports(route: Route) -> Support {
        let config = config();
        let providers: Vec<String> = config["providers"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
            .unwrap_or_else(|| vec!["scripted".into()]);
        let priority = config["priority"].as_i64().unwrap_or(50) as i32;
        if providers.iter().any(|p| *p == route.provider) {
            Support::Supported((priority, format!("provider `{}` is configured for plan-act", route.provider)))
        } else {
            Support::Unsupported(format!("provider `{}` is not in plan-act's providers", route.provider))
        }
    }

    fn run_attempt(turn: PreparedTurn) -> Result<String, String> {
        if let Some(session) = &turn.session_id {
            TURNS.with(|t| *t.borrow_mut().entry(session.clone()).or_default() += 1);
        }
        let mut messages = turn.history.clone();
        messages.push(Message::User(turn.user_text.clone()));
        let base = turn.system.clone().unwrap_or_default();
        let plan_system = format!("{base}\n{PLAN_PROMPT}");
        let plan = model::complete(Some(&plan_system), &messages, &[])?;
        host::log(host::Level::Info, &format!("plan: {}", plan.text));
        messages.push(Message::Assistant(AssistantMessage { text: plan.text.clone(), tool_calls: vec![] }));
        let system = format!("{base}\nFollow your plan:\n{}", plan.text);
        let offered = tools::available();
        for _ in 1..turn.max_iterations {
            let reply = model::complete(Some(&system), &messages, &offered)?;
            messages.push(Message::Assistant(AssistantMessage { text: reply.text.clone(), tool_calls: reply.tool_calls.clone() }));
            if reply.tool_calls.is_empty() {
                return Ok(reply.text);
            }
            for call in reply.tool_calls {
                let out = tools::call(&call);
                messages.push(Message::ToolResult(ToolResultMessage {
                    call_id: call.id,
                    tool: call.name,
                    content: out.content,
                    is_error: out.is_error,
                }));
            }
        }
        Err(format!("no final answer within {} model calls", turn.max_iterations))
    }

    fn reset(session_id: String) {
        let turns = TURNS.with(|t| t.borrow_mut().remove(&session_id)).unwrap_or(0);
        host::log(host::Level::Info, &format!("reset session {session_id} after {turns} turns"));
    }

    fn dispose() {
        TURNS.with(|t| t.borrow_mut().clear());
    }
}

export!(PlanAct);
