//! Session and model hooks through a real plugin (`context-hooks`).

use clawhost_agent_core::{Message, RunContext, ToolCallRequest, ToolResultMessage};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::Session;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, runner_with, wire};
use serde_json::json;

fn history() -> Vec<Message> {
    let mut h = Vec::new();
    for i in 0..5 {
        h.push(Message::user(format!(
            "question {i}: {}",
            "words ".repeat(30)
        )));
        h.push(Message::tool_calls(vec![ToolCallRequest {
            id: format!("c{i}"),
            name: "echo".into(),
            arguments: json!({"text": "x"}),
        }]));
        h.push(Message::ToolResult(ToolResultMessage {
            call_id: format!("c{i}"),
            tool: "echo".into(),
            content: "{}".into(),
            is_error: false,
            images: Vec::new(),
        }));
        h.push(Message::assistant(format!("answer {i}")));
    }
    h
}

#[tokio::test]
async fn prompt_compaction_model_and_session_hooks_reach_the_plugin() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["all good"], 7, 2)));
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "plugins": {"entries": {"context-hooks": {
                "config": {"systemNote": "Operator note: be kind.", "prepend": "[ticket 42]", "summarize": true},
                "grants": {"compaction": true},
                "hooks": {"allowConversationAccess": true}
            }}},
            "models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url(), "models": [{"id": "m", "contextWindow": 400}]}}},
            "agents": {"defaults": {"model": "fake/m", "systemPrompt": "Be brief.", "compaction": {"reserveTokens": 100, "keepRecentTokens": 60}}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["context-hooks"]).await;
    runner.start_session("s1", "main", false).await;
    let mut session = Session::new("s1", "main");
    session.history = history().into_iter().map(Into::into).collect();
    let ctx = RunContext::new("main", "fake/m");
    let out = runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &ctx,
            "status?",
        )
        .await
        .unwrap();
    assert_eq!(out.answer, "all good");
    runner
        .end_session("s1", "main", clawhost_hooks::SessionEndReason::Quit)
        .await;

    // before_prompt_build: system note appended, context put before the
    // user's message, each joined with a blank line.
    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        1,
        "the plugin wrote the summary, so no summary model call"
    );
    let messages = requests[0].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0]["content"],
        "Be brief.\n\nOperator note: be kind."
    );
    assert_eq!(
        messages.last().unwrap()["content"],
        "[ticket 42]\n\nstatus?"
    );
    // The injected context reached the model, not the session: what is kept
    // is what the user said.
    let user_turn = session
        .history
        .iter()
        .rev()
        .find(|m| matches!(***m, Message::User { .. }))
        .unwrap();
    assert_eq!(**user_turn, Message::user("status?"));
    // The compaction provider (granted): the plugin's summary replaced the old messages.
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("[Summary of the earlier conversation]\ncontext-hooks summary of"),
        "{}",
        messages[1]
    );
    assert_eq!(session.compactions.len(), 1);

    // before_reset: observed with the messages about to be cleared.
    let held = session.history.len();
    assert!(held > 0);
    runner.reset_session(&mut session).await;
    assert!(session.history.is_empty());

    let logs: Vec<String> = runner
        .plugins()
        .plugin("context-hooks")
        .unwrap()
        .logs()
        .into_iter()
        .map(|l| l.message)
        .collect();
    for expected in [
        "observed session_start s1 resumed=false",
        "observed after_compaction compacted=",
        "observed before_compaction compacting=",
        "observed llm_input fake/m attempt=1 history=",
        "observed model_call_started run-",
        "observed model_call_ended run-",
        "observed llm_output fake/m attempt=1 texts=all good output_tokens=2",
        "observed agent_end success=true iterations=1 text=all good",
        &format!("observed before_reset s1 messages={held}"),
        "observed session_end s1 reason=quit",
    ] {
        assert!(
            logs.iter().any(|l| l.starts_with(expected)),
            "missing `{expected}` in {logs:#?}"
        );
    }
    // (`llm_input` and `llm_output` run without being waited for: they are
    // in the log by the session's end, in no fixed place.)
    let order: Vec<usize> = [
        "session_start",
        "before_compaction",
        "after_compaction",
        "model_call_started",
        "model_call_ended",
        "agent_end",
        "session_end",
        "before_reset",
    ]
    .iter()
    .map(|h| {
        logs.iter()
            .position(|l| l.starts_with(&format!("observed {h}")))
            .unwrap()
    })
    .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "hooks fire in turn order: {logs:#?}"
    );
}

#[tokio::test]
async fn conversation_and_prompt_hooks_are_delivered_only_as_the_operator_allows() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = |cfg| async move {
        let host = clawhost_tests::host_with(&cfg, &["context-hooks"])
            .await
            .unwrap();
        let delivered: Vec<&str> = host
            .hook_registrations()
            .iter()
            .map(|r| r.kind.name())
            .collect();
        (delivered, host.statuses()[0].withheld.clone())
    };
    // By default (as in OpenClaw) the hooks that see the conversation are
    // withheld; the prompt hook is delivered.
    let (delivered, withheld) = kinds(config(json!({}), dir.path())).await;
    assert_eq!(
        delivered,
        [
            "after_tool_call",
            "before_prompt_build",
            "session_start",
            "session_end",
            "before_reset",
            "before_compaction",
            "after_compaction",
            "before_model_resolve",
            "before_agent_start",
            "model_call_started",
            "model_call_ended",
            "before_agent_run",
            "before_agent_reply",
            "agent_turn_prepare"
        ]
    );
    let conversation = "hooks.allowConversationAccess";
    assert_eq!(
        withheld,
        [
            ("agent_end".to_string(), conversation),
            ("llm_input".to_string(), conversation),
            ("llm_output".to_string(), conversation),
            ("before_agent_finalize".to_string(), conversation),
            ("resolve_exec_env".to_string(), "grants.execEnv"),
        ]
    );
    let cfg = config(
        json!({"plugins": {"entries": {"context-hooks": {"hooks": {
            "allowConversationAccess": true,
            "allowPromptInjection": false
        }}}}}),
        dir.path(),
    );
    let (delivered, withheld) = kinds(cfg).await;
    assert!(delivered.contains(&"llm_input") && delivered.contains(&"agent_end"));
    let injection = "hooks.allowPromptInjection";
    assert_eq!(
        withheld,
        [
            ("before_prompt_build".to_string(), injection),
            ("agent_turn_prepare".to_string(), injection),
            ("resolve_exec_env".to_string(), "grants.execEnv"),
        ]
    );
}

#[tokio::test]
async fn after_compaction_fires_with_a_count_of_zero_when_there_is_nothing_to_compact() {
    // As OpenClaw: the attempt is reported even when nothing was summarized.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), "[]").unwrap();
    let cfg = config(
        json!({
            "plugins": {"entries": {"context-hooks": {"hooks": {"allowConversationAccess": true}}}},
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json", "models": [{"id": "m"}]}}},
            "agents": {"defaults": {"model": "scripted/m"}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["context-hooks"]).await;
    let ctx = RunContext::new("main", "scripted/m");
    let model = runner.model_client(&runtimes.current("main").unwrap(), &ctx);
    let mut history = vec![Message::user("hi").into()];
    let hooks = clawhost_runner::CompactionHooks {
        runner: runner.hooks(),
        session_id: Some("s1".into()),
    };
    let record =
        clawhost_runner::compact(&mut history, model.as_ref(), &ctx, 10_000, "manual", &hooks)
            .await
            .unwrap();
    assert!(record.is_none());
    let logs = runner.plugins().plugin("context-hooks").unwrap().logs();
    assert!(
        logs.iter().any(|l| l
            .message
            .starts_with("observed after_compaction compacted=0 of 1")),
        "{logs:?}"
    );
    assert!(
        !logs
            .iter()
            .any(|l| l.message.starts_with("observed before_compaction")),
        "before_compaction has nothing to show"
    );
}
