//! `tool_result_persist` and `before_message_write` through a real plugin
//! (`redact-results` with `"where": "transcript"`): they change what the
//! session stores, never what the model saw.

use clawhost_agent_core::{Message, RunContext, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::EmbeddedRunner;
use clawhost_sessions::SessionStore;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, runner_with, wire};
use serde_json::{json, Value};

const KEY: &str = "sk-live1234567890abcd";

struct Run {
    fake: FakeProvider,
    runner: EmbeddedRunner,
    stored: Vec<Message>,
    events: Vec<TurnEvent>,
    _dir: tempfile::TempDir,
}

/// One persisted turn: the model calls `echo` with the key, then answers
/// repeating it; the user's message carries an e-mail address.
async fn persisted_turn(redact: Value) -> Run {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "plugins": {"entries": {"redact-results": redact}},
            "models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url(),
                "retry": {"maxAttempts": 1}, "models": [{"id": "m", "contextWindow": 100000}]}}},
            "agents": {"defaults": {"model": "fake/m"}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["redact-results"]).await;
    let store = SessionStore::new(dir.path().join("sessions"));
    let id = store.create("main", None).unwrap().id().to_string();
    let args = format!("{{\"text\":\"key {KEY}\"}}");
    fake.push(Reply::sse(wire::chat_tool_call("c1", "echo", &[&args])));
    fake.push(Reply::sse(wire::chat_text(&["the key is ", KEY], 1, 1)));
    let ctx = RunContext::new("main", "fake/m");
    runner
        .run_persisted_turn(
            &store,
            "main",
            &id,
            runtimes.current("main").unwrap(),
            &ctx,
            "mail me at bob@example.com",
        )
        .await
        .unwrap();
    let stored = store.open("main", &id).unwrap().context();
    Run {
        fake,
        runner,
        stored,
        events: ctx.events.snapshot(),
        _dir: dir,
    }
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::User { text, .. } | Message::Assistant { text, .. } => text.clone(),
            Message::ToolResult(r) => r.content.clone(),
        })
        .collect()
}

#[tokio::test]
async fn stored_results_and_messages_are_redacted_while_the_model_saw_them_whole() {
    let run = persisted_turn(json!({
        "config": {"where": "transcript"},
        "hooks": {"allowConversationAccess": true}
    }))
    .await;
    let stored = texts(&run.stored);
    assert_eq!(stored.len(), 4, "{stored:?}");
    assert_eq!(stored[0], "mail me at [REDACTED]");
    assert!(
        stored[2].contains("[REDACTED]") && !stored[2].contains(KEY),
        "{}",
        stored[2]
    );
    assert_eq!(stored[3], "the key is [REDACTED]");
    // The tool call itself (its arguments) is stored as the model made it:
    // the hooks may not change tool call ids, and this plugin leaves them.
    assert!(
        matches!(&run.stored[1], Message::Assistant { tool_calls, .. } if tool_calls[0].id == "c1")
    );
    // The model saw the user's text and the tool result unredacted.
    let second = run.fake.requests()[1].body["messages"].to_string();
    assert!(
        second.contains("bob@example.com") && second.contains(KEY),
        "{second}"
    );
    assert!(run.events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. } if hook.name() == "tool_result_persist" && decision.starts_with("replace"))));
    assert!(run.events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. } if hook.name() == "before_message_write" && decision == "replace")));
}

#[tokio::test]
async fn before_message_write_needs_conversation_access_and_tool_result_persist_does_not() {
    let run = persisted_turn(json!({"config": {"where": "transcript"}})).await;
    let stored = texts(&run.stored);
    assert_eq!(
        stored[0], "mail me at bob@example.com",
        "not delivered: no grant"
    );
    assert!(!stored[2].contains(KEY), "{}", stored[2]);
    let status = run
        .runner
        .plugins()
        .plugin("redact-results")
        .unwrap()
        .status();
    assert!(
        status
            .withheld
            .iter()
            .any(|(h, why)| h == "before_message_write" && *why == "hooks.allowConversationAccess"),
        "{:?}",
        status.withheld
    );
}

#[tokio::test]
async fn a_blocked_message_is_kept_out_of_the_transcript() {
    let run = persisted_turn(json!({
        "config": {"where": "transcript", "keepOut": ["bob@"]},
        "hooks": {"allowConversationAccess": true}
    }))
    .await;
    let stored = texts(&run.stored);
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert!(stored.iter().all(|t| !t.contains("bob@")), "{stored:?}");
    assert!(run.events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. } if hook.name() == "before_message_write" && decision.starts_with("block: mentions `bob@`"))));
}
