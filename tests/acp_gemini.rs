//! The `acp` runtime against Gemini CLI (`gemini --acp`, pinned in
//! `support/npm.rs`), whose model is a fake Gemini API server on loopback.
//! Gemini CLI writes files through the client's `fs/write_text_file`: the
//! acp plugin serves it with the host's `write` tool, through the turn's
//! dispatch path (policy and hooks apply, the mirror records it).

use std::path::Path;

use clawhost_agent_core::{Message, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::{EmbeddedRunner, Session};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, npm, runner_with, session_turn};
use serde_json::{json, Value};

/// A granted `gemini --acp` whose model is `fake`, its home and workspace
/// under `dir` (the host's workspace too), in its `default` mode; the
/// host's route `agent/gemini` selects `acp`. `guard` configures
/// policy-guard.
fn gemini_config(fake: &FakeProvider, dir: &Path, guard: Value) -> clawhost_config::Config {
    let home = dir.join("gemini-home");
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    let env = json!([
        {"name": "HOME", "value": home},
        {"name": "GEMINI_API_KEY", "value": "test-key"},
        {"name": "GOOGLE_GEMINI_BASE_URL", "value": fake.url()},
    ]);
    config(
        json!({
            "models": {"providers": {"agent": {
                "baseUrl": fake.url(), "api": "openai-completions", "apiKey": "unused",
                "models": [{"id": "gemini", "agentRuntime": {"id": "acp"}}]
            }}},
            "agents": {"defaults": {"model": "agent/gemini", "workspace": workspace}},
            "plugins": {"entries": {
                "acp": {
                    "grants": {"harness": true, "processes": {"agent": {
                        "command": npm::bin(npm::GEMINI, "gemini"),
                        "args": ["--acp", "-m", "gemini-2.5-pro"],
                        "env": env,
                        "cwd": workspace
                    }}},
                    "config": {
                        "cwd": workspace, "mode": "default", "providers": ["agent"],
                        "startTimeoutMs": 60000, "idleTimeoutMs": 60000
                    }
                },
                "policy-guard": {"config": guard}
            }}
        }),
        dir,
    )
}

async fn gemini_runner(cfg: clawhost_config::Config) -> (EmbeddedRunner, ModelRuntimes) {
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["acp", "policy-guard"]).await;
    (runner, runtimes)
}

/// One streamed Gemini API reply of `parts`.
fn gemini(parts: Value) -> Reply {
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-pro"
    });
    Reply::sse(vec![format!("data: {chunk}\r\n\r\n")])
}

/// Gemini calling its `write_file` tool.
fn write_file(path: &Path, content: &str) -> Reply {
    gemini(
        json!([{"functionCall": {"name": "write_file", "args": {"file_path": path, "content": content}}}]),
    )
}

/// The function responses Gemini sent its model in `body`.
fn function_responses(body: &Value) -> String {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("functionResponse").is_some())
        .map(|p| p["functionResponse"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Run one turn of a new session with `prompt`: the session and the
/// calls `before_tool_call` was asked about.
async fn turn(
    runner: &EmbeddedRunner,
    runtimes: &ModelRuntimes,
    prompt: &str,
) -> (Session, Vec<String>) {
    let mut session = Session::new("s1", "main");
    let (outcome, ctx) = session_turn(runner, runtimes, &mut session, "agent/gemini", prompt).await;
    outcome.unwrap();
    let asked = ctx
        .events
        .snapshot()
        .into_iter()
        .filter_map(|e| match e {
            TurnEvent::HookDecision { hook, call_id, .. } if hook.name() == "before_tool_call" => {
                Some(call_id)
            }
            _ => None,
        })
        .collect();
    (session, asked)
}

#[tokio::test]
async fn gemini_writes_files_through_the_hosts_write_tool_and_its_hooks() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let (runner, runtimes) = gemini_runner(gemini_config(&fake, dir.path(), json!({}))).await;
    // Gemini asks to edit the file (asked of the host as `apply_patch`),
    // then writes it through the client: the host's `write` tool, in the
    // mirror.
    std::fs::write(workspace.join("plan.txt"), "draft\n").unwrap();
    fake.push(write_file(&workspace.join("plan.txt"), "step one\n"));
    fake.push(gemini(json!([{"text": "Wrote the plan."}])));
    let (session, asked) = turn(&runner, &runtimes, "write the plan").await;
    assert_eq!(
        std::fs::read_to_string(workspace.join("plan.txt")).unwrap(),
        "step one\n"
    );
    let calls: Vec<_> = session
        .history
        .iter()
        .filter_map(|m| match &**m {
            Message::Assistant { tool_calls, .. } => tool_calls.first().cloned(),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "{:#?}", session.history);
    assert_eq!(calls[0].name, "write");
    assert_eq!(calls[0].arguments["content"], "step one\n");
    // policy-guard saw the permission and the write.
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked.contains(&calls[0].id), "{asked:?}");
    assert!(
        matches!(&**session.history.last().unwrap(), Message::Assistant { text, .. } if text == "Wrote the plan.")
    );
    // A new file too.
    fake.push(write_file(&workspace.join("notes/new.txt"), "fresh\n"));
    fake.push(gemini(json!([{"text": "Made it."}])));
    turn(&runner, &runtimes, "make a note").await;
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes/new.txt")).unwrap(),
        "fresh\n"
    );

    // With `write` blocked by policy-guard, the agent's write is refused on
    // the host's side: the file is unchanged and the model hears of an error.
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let guard = json!({"blockTools": ["write"]});
    let (runner, runtimes) = gemini_runner(gemini_config(&fake, dir.path(), guard)).await;
    std::fs::write(workspace.join("plan.txt"), "draft\n").unwrap();
    fake.push(write_file(&workspace.join("plan.txt"), "overwritten\n"));
    fake.push(gemini(json!([{"text": "The host refused."}])));
    let (session, _) = turn(&runner, &runtimes, "overwrite the plan").await;
    assert_eq!(
        std::fs::read_to_string(workspace.join("plan.txt")).unwrap(),
        "draft\n"
    );
    let refused = session.history.iter().find_map(|m| match &**m {
        Message::ToolResult(r) if r.tool == "write" => Some((r.is_error, r.content.clone())),
        _ => None,
    });
    let (is_error, why) = refused.expect("the write is in the mirror");
    assert!(is_error && why.contains("tool `write` is blocked"), "{why}");
    // Gemini hears an error (0.61 shows a client's error as `[object
    // Object]`, whatever its text).
    let responses = function_responses(&fake.requests().last().unwrap().body);
    assert!(responses.contains("Error writing to file"), "{responses}");
}
