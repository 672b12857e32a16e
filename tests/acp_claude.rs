//! The `acp` runtime against Claude Code: the ACP agent
//! `@agentclientprotocol/claude-agent-acp` (pinned in `support/npm.rs`; its
//! SDK carries the `claude` binary), whose model is a fake Anthropic
//! Messages server on loopback. The agent's commands are asked of the host
//! (`session/set_mode` to `default`, where Claude Code asks before it acts),
//! clawhost's tools reach it over MCP, and its session is resumed.

use std::path::Path;

use clawhost_agent_core::{RunContext, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::EmbeddedRunner;
use clawhost_sessions::SessionStore;
use clawhost_tests::agents::{abort_once_streaming, host_tools_config, kinds};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{clawhost_bin, config, npm, runner_with, wire};
use serde_json::{json, Value};

/// A granted `claude-agent-acp` whose model is `fake`, its home and
/// workspace under `dir`, asked to work in its `default` mode and given
/// clawhost's tools; the host's route `agent/claude` selects `acp`.
fn claude_config(fake: &FakeProvider, dir: &Path) -> clawhost_config::Config {
    let home = dir.join("claude-home");
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    let env = json!([
        {"name": "HOME", "value": home},
        {"name": "ANTHROPIC_BASE_URL", "value": fake.url()},
        {"name": "ANTHROPIC_API_KEY", "value": "sk-test"},
        {"name": "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION", "value": "false"},
        {"name": "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "value": "1"},
        {"name": "DISABLE_AUTOUPDATER", "value": "1"}
    ]);
    config(
        json!({
            "models": {"providers": {"agent": {
                "baseUrl": fake.url(), "api": "anthropic-messages", "apiKey": "unused",
                "models": [{"id": "claude", "agentRuntime": {"id": "acp"}}]
            }}},
            "agents": {"defaults": {"model": "agent/claude"}},
            "plugins": {"entries": {
                "acp": {
                    "grants": {"harness": true, "processes": {"agent": {
                        "command": npm::bin(npm::CLAUDE_ACP, "claude-agent-acp"),
                        "env": env,
                        "cwd": workspace
                    }}},
                    "config": {
                        "cwd": workspace, "mode": "default", "providers": ["agent"],
                        "startTimeoutMs": 60000, "idleTimeoutMs": 60000,
                        "hostTools": {"command": clawhost_bin(), "args": ["--config", host_tools_config(dir), "mcp", "serve"]}
                    }
                },
                "policy-guard": {"config": {"blockWords": ["keep.txt"]}}
            }},
            // The operator allowlisted `touch`, nothing else.
            "tools": {"exec": {"allow": ["touch"]}}
        }),
        dir,
    )
}

async fn claude_runner(cfg: clawhost_config::Config) -> (EmbeddedRunner, ModelRuntimes) {
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["acp", "policy-guard"]).await;
    (runner, runtimes)
}

/// Claude calling `name` with `input`.
fn tool_use(id: &str, name: &str, input: Value) -> Reply {
    Reply::sse(wire::anthropic_tool_call(id, name, &[&input.to_string()]))
}

/// Claude answering `text`.
fn answer(text: &str) -> Reply {
    Reply::sse(wire::anthropic_text(&[text], 10, 5))
}

/// The text of every tool result Claude sent its model in `body`.
fn tool_results(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "tool_result")
        .map(|c| c["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn claude_code_asks_the_host_uses_clawhosts_tools_and_resumes_its_session() {
    let fake = FakeProvider::start().await;
    fake.answer_untooled(answer("A title"));
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let (runner, runtimes) = claude_runner(claude_config(&fake, dir.path())).await;
    let store = SessionStore::new(dir.path().join("sessions"));
    let id = store.create("main", None).unwrap().id().to_string();
    let generation = runtimes.current("main").unwrap();
    std::fs::write(workspace.join("keep.txt"), "precious").unwrap();

    // Turn 1: an allowlisted command (asked of the host, allowed), a
    // clawhost tool over MCP, then the answer.
    fake.push(tool_use(
        "tu_1",
        "Bash",
        json!({"command": "touch made-by-claude", "description": "make a file"}),
    ));
    fake.push(tool_use(
        "tu_2",
        "mcp__clawhost__word_count",
        json!({"text": "one two three"}),
    ));
    fake.push(answer("Made it and counted."));
    let ctx = RunContext::new("main", "agent/claude");
    let (outcome, session) = runner
        .run_persisted_turn(&store, "main", &id, generation.clone(), &ctx, "make a file")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Made it and counted.");
    assert_eq!(session.runtime.as_deref(), Some("acp"));
    assert!(workspace.join("made-by-claude").exists());
    let events = ctx.events.snapshot();
    // policy-guard saw Claude's command as `exec` (and let it through).
    assert!(
        events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, call_id, .. }
            if hook.name() == "before_tool_call" && plugin == "policy-guard" && call_id == "tu_1")),
        "{events:#?}"
    );
    // The WASM tool's answer, served by `clawhost mcp serve`, reached the model.
    let requests: Vec<Value> = fake
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    let results = tool_results(requests.last().unwrap()).replace('\\', "");
    assert!(results.contains(r#""words":3"#), "{results}");
    // The mirror: each reply's text ("Let me check.") before its call.
    assert_eq!(
        kinds(&session.history),
        [
            "user",
            "assistant",
            "tool-call",
            "tool-result",
            "assistant",
            "tool-call",
            "tool-result",
            "assistant"
        ]
    );
    let (_, agent) = session
        .native_thread
        .clone()
        .expect("the session is stored");
    assert!(agent.contains("Claude"), "{agent}");

    // Turn 2 in a new agent process: session/load continues the session;
    // policy-guard blocks `rm keep.txt`, Claude hears the refusal and answers.
    fake.push(tool_use(
        "tu_3",
        "Bash",
        json!({"command": "rm keep.txt", "description": "remove it"}),
    ));
    fake.push(answer("It stays."));
    let ctx = RunContext::new("main", "agent/claude");
    let (outcome, _) = runner
        .run_persisted_turn(&store, "main", &id, generation, &ctx, "remove keep.txt")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "It stays.");
    assert!(workspace.join("keep.txt").exists());
    let events = ctx.events.snapshot();
    assert!(
        events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { plugin, call_id, decision, .. }
            if plugin == "policy-guard" && call_id == "tu_3" && decision.starts_with("block"))),
        "{events:#?}"
    );
    let last = fake.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("make a file") && last.contains("remove keep.txt"),
        "{last}"
    );
}

#[tokio::test]
async fn an_aborted_claude_turn_is_stored_as_aborted_and_its_session_resumes() {
    let fake = FakeProvider::start().await;
    fake.answer_untooled(answer("A title"));
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = claude_runner(claude_config(&fake, dir.path())).await;
    let runner = std::sync::Arc::new(runner);
    let store = std::sync::Arc::new(SessionStore::new(dir.path().join("sessions")));
    let id = store.create("main", None).unwrap().id().to_string();
    // A reply that stops halfway and never ends.
    let mut events = wire::anthropic_text(&["Halfway ", "there"], 10, 5);
    events.truncate(4);
    fake.push(Reply::sse_stalling(events, 4));
    let generation = runtimes.current("main").unwrap();
    abort_once_streaming(&runner, &store, &id, generation, "agent/claude", || {}).await;
    // Resumed, Claude's session keeps the streamed piece and says the
    // request was interrupted.
    fake.push(answer("Resumed."));
    let ctx = RunContext::new("main", "agent/claude");
    let (outcome, _) = runner
        .run_persisted_turn(
            &store,
            "main",
            &id,
            runtimes.current("main").unwrap(),
            &ctx,
            "go on",
        )
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Resumed.");
    let last = fake.requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("Halfway") && last.contains("[Request interrupted by user]"),
        "{last}"
    );
}
