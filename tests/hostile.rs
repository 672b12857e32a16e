//! Hostile plugins: each is contained, the turn gets a clear error or the
//! configured fail policy, nothing is lost from the transcript, and the other
//! plugins keep working.

use std::time::{Duration, Instant};

use clawhost_agent_core::{Message, RunContext, ToolError};
use clawhost_llm::ModelRuntimes;
use clawhost_plugin_runtime::{CallError, PluginState};
use clawhost_runner::persist::PersistError;
use clawhost_sessions::{EntryBody, SessionStore};
use clawhost_tests::{call_tool, config, dispatch, host_with, json_of, runner_with};
use serde_json::{json, Value};

fn limits(timeout_ms: u64, traps: u32) -> Value {
    json!({"memoryMb": 32, "callTimeoutMs": timeout_ms, "maxConsecutiveTraps": traps, "maxOutputKb": 1024})
}

#[tokio::test]
async fn malformed_answers_become_clear_errors_and_the_plugin_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(5_000, 10)}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-hostile", "text-tools"])
        .await
        .unwrap();

    let bad_json = call_tool(&host, "hostile", "bad_json", json!({}))
        .await
        .unwrap();
    let message = bad_json.unwrap_err();
    assert!(
        matches!(&message, ToolError::Failed(m) if m.contains("not valid JSON")),
        "{message}"
    );

    let bad_utf8 = call_tool(&host, "hostile", "bad_utf8", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(&bad_utf8, CallError::Trapped { id, reason } if id == "hostile" && reason.contains("utf-8")),
        "{bad_utf8}"
    );

    let huge = call_tool(&host, "hostile", "huge", json!({"mb": 3}))
        .await
        .unwrap_err();
    assert_eq!(
        huge,
        CallError::OutputTooLarge {
            id: "hostile".into(),
            what: "tool result",
            bytes: (3 << 20) + 2,
            limit_kb: 1024
        }
    );
    assert!(huge.to_string().contains("maxOutputKb"), "{huge}");
    // Under the cap, the same tool answers.
    let small = call_tool(&host, "hostile", "huge", json!({"mb": 0}))
        .await
        .unwrap();
    assert_eq!(small, Ok(json!("")));

    let status = host.plugin("hostile").unwrap().status();
    assert_eq!(status.state, PluginState::Active);
    let words = call_tool(&host, "text-tools", "word_count", json!({"text": "a b c"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(words["words"], 3);
}

#[tokio::test]
async fn unbounded_recursion_is_stopped_and_the_next_call_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(5_000, 10)}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-hostile"]).await.unwrap();
    let err = call_tool(&host, "hostile", "recurse", json!({}))
        .await
        .unwrap_err();
    let CallError::Trapped { reason, .. } = &err else {
        panic!("expected a trap, got {err}");
    };
    assert!(reason.contains("stack"), "{reason}");
    let next = call_tool(&host, "hostile", "huge", json!({"mb": 0})).await;
    assert_eq!(next, Ok(Ok(json!(""))));
    assert_eq!(host.plugin("hostile").unwrap().status().instantiations, 2);
}

#[tokio::test]
async fn the_network_is_closed_without_a_grant() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(json!({}), dir.path());
    let host = host_with(&cfg, &["test-hostile"]).await.unwrap();
    let result = call_tool(
        &host,
        "hostile",
        "connect",
        json!({"addr": addr.to_string()}),
    )
    .await
    .unwrap();
    let message = result.unwrap_err().to_string();
    assert!(message.contains("connect"), "{message}");
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the plugin reached the listener: {accepted:?}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn files_outside_the_grant_stay_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    let (data, outside) = (dir.path().join("data"), dir.path().join("outside"));
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(data.join("inside.txt"), "inside").unwrap();
    std::fs::write(outside.join("secret.txt"), "top secret").unwrap();
    std::os::unix::fs::symlink(&outside, data.join("dirlink")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), data.join("filelink")).unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"misbehave": {"grants": {
            "filesystem": [{"guestPath": "/data", "hostPath": "data", "access": "read-write"}]
        }}}}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let inside = call_tool(
        &host,
        "misbehave",
        "read_path",
        json!({"path": "/data/inside.txt"}),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(inside["text"], "inside", "the grant itself must work");

    let secret = outside.join("secret.txt");
    for path in [
        "/data/../outside/secret.txt",
        "/data/../../outside/secret.txt",
        "../outside/secret.txt",
        secret.to_str().unwrap(),
        "/data/dirlink/secret.txt",
        "/data/filelink",
    ] {
        let result = call_tool(&host, "misbehave", "read_path", json!({"path": path}))
            .await
            .unwrap();
        assert!(result.is_err(), "{path} must not be readable: {result:?}");
    }
    for path in ["/data/dirlink/planted.txt", "/data/../outside/planted.txt"] {
        let result = call_tool(
            &host,
            "misbehave",
            "write_path",
            json!({"path": path, "text": "x"}),
        )
        .await
        .unwrap();
        assert!(result.is_err(), "{path} must not be writable: {result:?}");
    }
    assert!(!outside.join("planted.txt").exists());
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "top secret",
        "the file outside is untouched"
    );
}

#[tokio::test]
async fn a_hook_that_sleeps_past_its_timeout_blocks_the_call_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"hostile": {"hooks": {"before_tool_call": {"timeoutMs": 200}}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-hostile", "text-tools"]).await;
    let started = Instant::now();
    let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile": "sleep"})).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the 30 s sleep was not cut short"
    );
    assert!(
        out.is_error && out.content.contains("200 ms deadline") && out.content.contains("blocked"),
        "{}",
        out.content
    );
    // The plugin and its neighbours keep serving.
    let (out, _) = dispatch(&runner, "huge", json!({"mb": 0})).await;
    assert_eq!(json_of(&out), json!(""));
    let (out, _) = dispatch(&runner, "word_count", json!({"text": "one two"})).await;
    assert_eq!(json_of(&out)["words"], 2);
}

#[tokio::test]
async fn each_call_into_a_hung_hook_costs_one_deadline_within_250_ms() {
    // The guest sleeps in a host call (WASI's clock), where no epoch tick
    // reaches it: the host gives up on the call at its deadline. Each of
    // three calls in a row costs one 1 s deadline, a fresh instance's
    // start included, not the plugin's 5 s call timeout on top.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": {"callTimeoutMs": 5000, "maxConsecutiveTraps": 5},
            "entries": {"hostile": {"hooks": {"before_tool_call": {"timeoutMs": 1000}}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-hostile"]).await;
    for n in 1..=3 {
        let started = Instant::now();
        let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile": "sleep"})).await;
        let took = started.elapsed();
        assert!(
            out.is_error && out.content.contains("1000 ms deadline"),
            "{}",
            out.content
        );
        assert!(
            took >= Duration::from_millis(1000) && took < Duration::from_millis(1250),
            "call {n} took {took:?}"
        );
    }
}

#[tokio::test]
async fn failing_tool_hooks_fail_closed_by_default() {
    let dir = tempfile::tempdir().unwrap();
    // 0.1's after-tool-call is the tool-result middleware: it needs the grant.
    let cfg = config(
        json!({"plugins": {"entries": {"hostile": {"grants": {"toolResults": true}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-hostile"]).await;
    for (mode, expected) in [
        (
            "wrong_kind",
            "answered observed to a before_tool_call event",
        ),
        ("bad_rewrite", "not valid JSON"),
        ("huge_block", "output limit"),
    ] {
        let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile": mode})).await;
        assert!(
            out.is_error
                && out
                    .content
                    .contains("before_tool_call hook of plugin `hostile` failed")
                && out.content.contains(expected),
            "{mode}: {}",
            out.content
        );
    }
    let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile_after": "trap"})).await;
    assert!(
        out.is_error && out.content.contains("result withheld"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn fail_policy_ignore_per_hook_and_per_plugin_lets_calls_through() {
    let dir = tempfile::tempdir().unwrap();
    // Per hook: before_tool_call is advisory; tool_result keeps the default.
    let cfg = config(
        json!({"plugins": {"entries": {"hostile": {
            "grants": {"toolResults": true},
            "hooks": {"before_tool_call": {"failPolicy": "ignore"}}
        }}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-hostile"]).await;
    let (out, ctx) = dispatch(&runner, "huge", json!({"mb": 0, "hostile": "wrong_kind"})).await;
    assert_eq!(json_of(&out), json!(""));
    let decisions = format!("{:?}", ctx.events.snapshot());
    assert!(decisions.contains("; ignored"), "{decisions}");
    let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile_after": "trap"})).await;
    assert!(out.is_error, "tool_result still fails closed");

    // Per plugin: every hook of the plugin is advisory, unless a hook says otherwise.
    let cfg = config(
        json!({"plugins": {"entries": {"hostile": {
            "grants": {"toolResults": true},
            "failPolicy": "ignore",
            "hooks": {"before_tool_call": {"failPolicy": "block"}}
        }}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-hostile"]).await;
    let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile_after": "trap"})).await;
    assert_eq!(json_of(&out), json!(""));
    let (out, _) = dispatch(&runner, "huge", json!({"mb": 0, "hostile": "wrong_kind"})).await;
    assert!(
        out.is_error,
        "the hook-level block wins over the plugin's ignore"
    );
}

const SCRIPT: &str = r#"[
  {"toolCalls": [
    {"name": "bad_json", "arguments": {}}, {"name": "bad_utf8", "arguments": {}},
    {"name": "huge", "arguments": {"mb": 2}}, {"name": "recurse", "arguments": {}},
    {"name": "connect", "arguments": {"addr": "127.0.0.1:9"}},
    {"name": "spin", "arguments": {}}, {"name": "hog", "arguments": {}},
    {"name": "crash", "arguments": {}},
    {"name": "word_count", "arguments": {"text": "{{user}}"}}
  ]},
  {"answer": "survived"}
]"#;

fn turn_config(
    dir: &std::path::Path,
    trap_on: &[&str],
    llm_input_policy: &str,
) -> clawhost_config::Config {
    std::fs::write(dir.join("script.json"), SCRIPT).unwrap();
    config(
        json!({
            "plugins": {
                "limits": limits(500, 3),
                "entries": {"hostile": {
                    "config": {"trapOn": trap_on},
                    "hooks": {
                        "allowConversationAccess": true,
                        "llm_input": {"failPolicy": llm_input_policy}
                    }
                }}
            },
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json", "models": [{"id": "m"}]}}},
            "agents": {"defaults": {"model": "scripted/m"}},
            "sessions": {"dir": "sessions"}
        }),
        dir,
    )
}

/// A runner with `packages`, its model runtimes, a session store and a new session.
struct Turn {
    runner: clawhost_runner::EmbeddedRunner,
    runtimes: ModelRuntimes,
    store: SessionStore,
    id: String,
}

impl Turn {
    async fn new(cfg: clawhost_config::Config, packages: &[&str]) -> Self {
        let store = SessionStore::new(cfg.sessions_dir());
        let runtimes = ModelRuntimes::new();
        runtimes.rebuild(&cfg).unwrap();
        let runner = runner_with(cfg, packages).await;
        let id = store.create("main", None).unwrap().id().to_string();
        Self {
            runner,
            runtimes,
            store,
            id,
        }
    }

    async fn run(&self, text: &str) -> Result<clawhost_agent_core::TurnOutcome, PersistError> {
        let ctx = RunContext::new("main", "scripted/m");
        let generation = self.runtimes.current("main").unwrap();
        self.runner
            .run_persisted_turn(&self.store, "main", &self.id, generation, &ctx, text)
            .await
            .map(|(outcome, _)| outcome)
    }

    fn transcript(&self) -> clawhost_sessions::Transcript {
        self.store.open("main", &self.id).unwrap()
    }
}

fn tool_results(messages: &[Message]) -> Vec<(String, bool, String)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.tool.clone(), r.is_error, r.content.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_turn_through_every_hostile_tool_loses_no_transcript_entry() {
    let dir = tempfile::tempdir().unwrap();
    // agent_end traps, but observe-only hooks fail open by default.
    let cfg = turn_config(dir.path(), &["agent_end"], "ignore");
    let turn = Turn::new(cfg, &["test-hostile", "test-misbehave", "text-tools"]).await;
    let outcome = turn.run("three little words").await.unwrap();
    assert_eq!(outcome.answer, "survived");

    let transcript = turn.transcript();
    let context = transcript.context();
    assert_eq!(
        context.len(),
        1 + 1 + 9 + 1,
        "user, tool calls, 9 results, answer"
    );
    let results = tool_results(&context);
    let expect = [
        ("bad_json", "not valid JSON"),
        ("bad_utf8", "trapped"),
        ("huge", "output limit"),
        ("recurse", "trapped"),
        ("connect", "connect 127.0.0.1:9"),
        ("spin", "500 ms deadline"),
        ("hog", "memory limit"),
        ("crash", "trapped"),
    ];
    for ((tool, is_error, content), (want_tool, want_text)) in results.iter().zip(expect) {
        assert_eq!(tool, want_tool);
        assert!(
            *is_error && content.contains(want_text),
            "{tool}: {content}"
        );
    }
    assert_eq!(
        results[8],
        (
            "word_count".into(),
            false,
            json!({"words": 3, "lines": 1, "chars": 18}).to_string()
        )
    );
    for plugin in ["hostile", "misbehave", "text-tools"] {
        let status = turn.runner.plugins().plugin(plugin).unwrap().status();
        assert_eq!(status.state, PluginState::Active, "{plugin}");
    }
}

#[tokio::test]
async fn an_observe_hook_never_stops_the_turn_whatever_its_fail_policy() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = turn_config(dir.path(), &["llm_input"], "block");
    let turn = Turn::new(cfg, &["test-hostile", "text-tools"]).await;
    // The hook traps on every model call; with fail policy block it would
    // have stopped the turn before. Observe-only hooks cannot block.
    let outcome = turn.run("hello").await.unwrap();
    assert!(!outcome.answer.is_empty());
    let status = turn.runner.plugins().plugin("hostile").unwrap().status();
    // It did trap: each trap discards the instance and the next call makes a new one.
    assert!(status.instantiations > 1, "{status:?}");
}

#[tokio::test]
async fn a_failed_turn_is_still_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = turn_config(dir.path(), &[], "ignore");
    // A script with no steps: the first model call fails.
    std::fs::write(dir.path().join("script.json"), "[]").unwrap();
    let turn = Turn::new(cfg, &["text-tools"]).await;
    let err = turn.run("hello").await.unwrap_err();
    assert!(err.to_string().contains("no step 1"), "{err}");
    let transcript = turn.transcript();
    assert_eq!(transcript.context(), vec![Message::user("hello")]);
    let error = transcript
        .entries()
        .iter()
        .find_map(|e| match &e.body {
            EntryBody::Custom { custom_type, data } if custom_type == "turn_error" => {
                Some(data.clone())
            }
            _ => None,
        })
        .expect("a turn_error entry");
    assert!(
        error["error"].as_str().unwrap().contains("no step 1"),
        "{error}"
    );
}
