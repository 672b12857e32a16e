//! A turn through the example WASM harness: the harness drives the model and
//! tools through host imports, and plugin hooks still apply to its tool calls.

use clawhost_agent_core::{Message, RunContext, TurnEvent};
use clawhost_harness::Reason;
use clawhost_llm::ModelRuntimes;
use clawhost_plugin_runtime::LogSource;
use clawhost_runner::{RunError, Session};
use clawhost_tests::{config, host_with, runner_with};
use serde_json::json;

const SCRIPT: &str = r#"[
  {"answer": "PLAN: 1. count the words with word_count"},
  {"toolCalls": [{"name": "word_count", "arguments": {"text": "{{user}}"}}]},
  {"answer": "Result: {{results}}"}
]"#;

fn harness_config(dir: &std::path::Path, block: bool) -> clawhost_config::Config {
    std::fs::write(dir.join("script.json"), SCRIPT).unwrap();
    config(
        json!({
            "plugins": {"entries": {
                "plan-act": {"grants": {"harness": true}, "config": {"providers": ["scripted"], "priority": 10}},
                "policy-guard": {"config": {"blockTools": if block { vec!["word_count"] } else { vec![] }}}
            }},
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json", "models": [{"id": "plan"}]}}},
            "agents": {"defaults": {"model": "scripted/plan"}}
        }),
        dir,
    )
}

#[tokio::test]
async fn a_harness_turn_still_goes_through_policy_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = harness_config(dir.path(), true);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["plan-act", "policy-guard", "text-tools"]).await;
    assert_eq!(runner.harnesses().ids(), vec!["plan-act"]);

    let mut session = Session::new("s1", "main");
    let generation = runtimes.current("main").unwrap();
    let ctx = RunContext::new("main", "scripted/plan");
    let out = runner
        .run_session_turn(&mut session, generation.clone(), &ctx, "one two three")
        .await
        .unwrap();

    let selection = session.selection.clone().unwrap();
    assert_eq!(
        (session.runtime.as_deref(), selection.reason),
        (Some("plan-act"), Reason::AutoPlugin)
    );
    let events = ctx.events.snapshot();
    assert!(events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, decision, .. }
            if hook.name() == "before_tool_call" && plugin == "policy-guard" && decision.contains("word_count"))), "{events:#?}");
    assert!(events.iter().any(
        |e| matches!(e, TurnEvent::ToolResult { tool, is_error: true, content, .. }
        if tool == "word_count" && content.contains("blocked"))
    ));
    assert!(
        out.answer
            .starts_with("Result: - word_count failed: tool call blocked"),
        "{}",
        out.answer
    );
    // The host mirrored the turn from what it saw: plan, tool call, result, answer.
    let kinds: Vec<&str> = session
        .history
        .iter()
        .map(|m| match &**m {
            Message::User { .. } => "user",
            Message::Assistant { tool_calls, .. } if tool_calls.is_empty() => "assistant",
            Message::Assistant { .. } => "tool-call",
            Message::ToolResult(_) => "tool-result",
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["user", "assistant", "tool-call", "tool-result", "assistant"]
    );
    assert_eq!(out.iterations, 3);

    let status = runner.status(&session, &generation).join("\n");
    assert!(status.contains("Model: scripted/plan"), "{status}");
    assert!(
        status.contains("Runtime: plan-act (pinned by this session")
            && status.contains("Execution: wasm plugin `plan-act` (sandboxed)"),
        "{status}"
    );
    assert!(status.contains("Selection: auto-plugin"), "{status}");

    // The second turn stays on the pinned runtime.
    let ctx = RunContext::new("main", "scripted/plan");
    runner
        .run_session_turn(&mut session, generation.clone(), &ctx, "again")
        .await
        .unwrap();
    assert_eq!(session.selection.as_ref().unwrap().reason, Reason::Pinned);

    // /reset clears the session and reaches the harness.
    runner.reset_session(&mut session).await;
    assert!(session.history.is_empty() && session.runtime.is_none());
    let logs = runner.plugins().plugin("plan-act").unwrap().logs();
    assert!(
        logs.iter().any(|l| matches!(l.source, LogSource::Log(_))
            && l.message == "reset session s1 after 2 turns"),
        "{logs:?}"
    );
    // The plan was read as it streamed: one piece per word of the reply.
    let plan = logs
        .iter()
        .find_map(|l| l.message.strip_prefix("plan ("))
        .expect("plan-act logs its plan");
    let (pieces, text) = plan.split_once(" streamed pieces): ").unwrap();
    assert_eq!(
        pieces.parse::<usize>().unwrap(),
        text.split_inclusive(' ').count(),
        "{plan}"
    );
    assert!(text.split(' ').count() > 1, "{plan}");
}

#[tokio::test]
async fn without_a_blocking_rule_the_harness_tool_call_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = harness_config(dir.path(), false);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["plan-act", "text-tools"]).await;
    let mut session = Session::new("s2", "main");
    let ctx = RunContext::new("main", "scripted/plan");
    let out = runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &ctx,
            "a b c d",
        )
        .await
        .unwrap();
    assert_eq!(
        out.answer,
        r#"Result: - word_count returned: {"chars":7,"lines":1,"words":4}"#
    );
}

#[tokio::test]
async fn an_explicit_runtime_that_is_not_loaded_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = harness_config(dir.path(), false);
    cfg.agents.defaults.embedded_harness = Some(clawhost_config::HarnessPolicy {
        runtime: Some("plan-act".into()),
        fallback: None,
    });
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["text-tools"]).await;
    let mut session = Session::new("s3", "main");
    let err = runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &RunContext::new("main", "scripted/plan"),
            "x",
        )
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Selection(_)), "{err}");
    assert!(
        err.to_string()
            .contains("runtime `plan-act` (agents.defaults.embeddedHarness) is not registered"),
        "{err}"
    );
}

#[tokio::test]
async fn a_harness_without_the_operator_grant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(json!({}), dir.path());
    let err = host_with(&cfg, &["plan-act"])
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("plugin `plan-act` refused") && err.contains("grants.harness"),
        "{err}"
    );
}

/// A harness plugin cannot carry images or reasoning over API 0.2; the host
/// keeps them and puts them back into the messages the harness sends, so
/// the model still sees the user's image and Anthropic still gets its
/// thinking back after the tool call.
#[tokio::test]
async fn what_a_harness_cannot_carry_still_reaches_the_model() {
    use clawhost_agent_core::{Image, UserInput};
    use clawhost_tests::fake_provider::{FakeProvider, Reply};
    use clawhost_tests::wire;

    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::anthropic_text(&["PLAN: count"], 10, 3)));
    fake.push(Reply::sse(wire::anthropic_thinking_tool_call(
        &["Count them."],
        "SIG-1",
        "REDACTED-1",
        ("toolu_1", "word_count", "{\"text\": \"a b c\"}"),
    )));
    fake.push(Reply::sse(wire::anthropic_text(&["3 words."], 30, 3)));
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "plugins": {"entries": {
                "plan-act": {"grants": {"harness": true}, "config": {"providers": ["claude"], "priority": 10}}
            }},
            "models": {"providers": {"claude": {"api": "anthropic-messages", "baseUrl": fake.url(), "apiKey": "k",
                "retry": {"maxAttempts": 1}, "models": [{"id": "m", "input": ["text", "image"]}]}}},
            "agents": {"defaults": {"model": "claude/m"}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["plan-act", "text-tools"]).await;
    let mut session = Session::new("s1", "main");
    let image = Image::from_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let out = runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &RunContext::new("main", "claude/m"),
            UserInput {
                text: "count the words".into(),
                images: vec![image.clone()],
            },
        )
        .await
        .unwrap();
    assert_eq!(out.answer, "3 words.");
    assert_eq!(session.runtime.as_deref(), Some("plan-act"));
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(
            r.body["messages"][0]["content"][0]["type"], "image",
            "the user's image, in every call: {}",
            r.body["messages"][0]
        );
    }
    let replied = requests[2].body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .clone();
    let kinds: Vec<&str> = replied
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["text", "thinking", "redacted_thinking", "tool_use"],
        "{replied:?}"
    );
    assert_eq!(replied[1]["signature"], "SIG-1");
    // The turn as stored keeps both.
    assert!(matches!(&out.new_messages[0], Message::User { images, .. } if images == &[image]));
    assert!(out
        .new_messages
        .iter()
        .any(|m| matches!(m, Message::Assistant { reasoning, .. } if reasoning.len() == 2)));
}

#[tokio::test]
async fn a_harness_calling_past_its_tool_limit_is_stopped_and_its_refusals_are_bounded() {
    // One model reply asks for 50 calls; the turn may make 2. plan-act
    // calls every one: the 3rd is refused, the 4th stops the turn.
    let dir = tempfile::tempdir().unwrap();
    let calls: Vec<_> = (0..50)
        .map(|i| json!({"name": "word_count", "arguments": {"text": format!("call {i}")}}))
        .collect();
    let script = json!([{"answer": "PLAN: count"}, {"toolCalls": calls}, {"answer": "done"}]);
    std::fs::write(dir.path().join("script.json"), script.to_string()).unwrap();
    let cfg = config(
        json!({
            "plugins": {"entries": {
                "plan-act": {"grants": {"harness": true}, "config": {"providers": ["scripted"], "priority": 10}}
            }},
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json", "models": [{"id": "plan"}]}}},
            "agents": {"defaults": {"model": "scripted/plan", "maxToolCallsPerTurn": 2}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["plan-act", "text-tools"]).await;
    let mut session = Session::new("s1", "main");
    let ctx = RunContext::new("main", "scripted/plan");
    let err = runner
        .run_session_turn(&mut session, runtimes.current("main").unwrap(), &ctx, "go")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("maxToolCallsPerTurn"), "{err}");
    let results: Vec<bool> = ctx
        .events
        .snapshot()
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolResult { is_error, .. } => Some(*is_error),
            _ => None,
        })
        .collect();
    assert_eq!(results, vec![false, false, true], "two served, one refusal");
    // Stopping the turn is not the harness's failure.
    let status = runner.plugins().plugin("plan-act").unwrap().status();
    assert_eq!(status.consecutive_failures, 0);
}
