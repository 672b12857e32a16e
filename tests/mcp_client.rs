//! MCP servers as tool sources, against servers made with the official
//! Python SDK (PyPI `mcp`, pinned in `support/python.rs`) over stdio and
//! Streamable HTTP, and a hand-written one that misbehaves: their tools take
//! the host's one dispatch path (policy, hooks, approvals, transcript).

use std::path::Path;

use clawhost_agent_core::{Message, RunContext, ToolExecutor, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_mcp_client::{McpServers, ServerState};
use clawhost_runner::{AgentHost, EmbeddedRunner, TurnRequest};
use clawhost_sessions::SessionStore;
use clawhost_tests::agents::{eventually, merge, readme_config, text_answer, tool_call};
use clawhost_tests::fake_provider::FakeProvider;
use clawhost_tests::python::{mcp_stdio, HttpMcpServer};
use clawhost_tests::{config, dispatch, host_with};
use serde_json::{json, Value};

/// A config with the fake model and `servers`, plus `extra`.
fn mcp_config(
    fake: &FakeProvider,
    dir: &Path,
    servers: Value,
    extra: Value,
) -> clawhost_config::Config {
    let mut cfg = json!({
        "models": {"providers": {"fake": {
            "baseUrl": format!("{}/v1", fake.url()), "api": "openai-responses", "apiKey": "sk-test",
            "models": [{"id": "gpt-5.1", "input": ["text", "image"]}]
        }}},
        "agents": {"defaults": {"model": "fake/gpt-5.1"}},
        "mcp": {"servers": servers},
    });
    merge(&mut cfg, extra);
    config(cfg, dir)
}

/// A runner with the MCP servers of `cfg` and the named plugin packages.
async fn mcp_runner(cfg: clawhost_config::Config, packages: &[&str]) -> EmbeddedRunner {
    let host = host_with(&cfg, packages).await.expect("plugins load");
    let mcp = McpServers::start(&cfg).await;
    EmbeddedRunner::from_sources(cfg, host, mcp).expect("tools register")
}

/// The stdio server of the SDK, noting its events in `marks`.
fn sdk_stdio(marks: &Path, extra: Value) -> Value {
    let mut extra = extra;
    merge(
        &mut extra,
        json!({"env": {"MCP_MARKS": marks.to_string_lossy()}}),
    );
    mcp_stdio("tools_server.py", &["stdio"], extra)
}

/// Call `tool`: the operator is asked (an approval event for it), and
/// the unanswered question (non-interactive) refuses the call.
async fn assert_asked(runner: &EmbeddedRunner, tool: &str) {
    let (out, ctx) = dispatch(runner, tool, json!({"text": "x"})).await;
    assert!(
        out.is_error && out.content.contains("asked for approval"),
        "{}",
        out.content
    );
    assert!(ctx
        .events
        .snapshot()
        .iter()
        .any(|e| matches!(e, TurnEvent::Approval { tool: t, .. } if t == tool)));
}

fn marks(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn a_turn_calls_stdio_and_http_servers_tools_through_the_hosts_hooks() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let http = HttpMcpServer::start().await;
    let servers = json!({
        "files": sdk_stdio(&dir.path().join("marks"), json!({})),
        "web": {"url": http.url, "headers": {"X-Test": "clawhost"}},
    });
    let cfg = mcp_config(
        &fake,
        dir.path(),
        servers,
        json!({"plugins": {"entries": {"policy-guard": {"config": {"blockTools": ["mcp__web__fail"]}}}}}),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = mcp_runner(cfg, &["policy-guard"]).await;
    for report in runner.mcp_servers() {
        assert_eq!(report.state, ServerState::Ready, "{report:?}");
        // The SDK's servers know the current revision (`server/discover`).
        assert_eq!(report.protocol, "2026-07-28", "{report:?}");
        assert!(report
            .tools
            .iter()
            .any(|(offered, remote)| remote == "shout"
                && *offered == format!("mcp__{}__shout", report.server)));
    }

    fake.push(tool_call(
        "c1",
        "mcp__files__shout",
        json!({"text": "hi there"}),
    ));
    fake.push(tool_call("c2", "mcp__web__picture", json!({})));
    fake.push(tool_call(
        "c3",
        "mcp__web__fail",
        json!({"why": "blocked first"}),
    ));
    fake.push(tool_call(
        "c4",
        "mcp__files__fail",
        json!({"why": "disk full"}),
    ));
    fake.push(text_answer("m", &["All ", "done."]));
    let store = SessionStore::new(dir.path().join("sessions"));
    let id = store.create("main", None).unwrap().id().to_string();
    let ctx = RunContext::new("main", "fake/gpt-5.1");
    let (outcome, session) = runner
        .run_persisted_turn(
            &store,
            "main",
            &id,
            runtimes.current("main").unwrap(),
            &ctx,
            "go",
        )
        .await
        .unwrap();
    assert_eq!(outcome.answer, "All done.");

    // Each result reached the model: the text, the image as an image, the
    // policy plugin's block, the server's error.
    let requests = fake.requests();
    assert_eq!(requests.len(), 5, "{requests:#?}");
    let input = |i: usize| requests[i].body["input"].to_string();
    assert!(input(1).contains("HI THERE"), "{}", input(1));
    assert!(
        input(2).contains("a red dot") && input(2).contains("iVBORw0KGgo"),
        "{}",
        input(2)
    );
    assert!(input(3).contains("blocked"), "{}", input(3));
    assert!(
        input(4).contains("failed on purpose: disk full"),
        "{}",
        input(4)
    );
    // The server never saw the blocked call; the hook decision is recorded.
    let events = ctx.events.snapshot();
    assert!(events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, call_id, .. }
            if hook.name() == "before_tool_call" && plugin == "policy-guard" && call_id == "c3")));
    // The transcript holds every call and result.
    let results: Vec<(String, bool)> = session
        .history
        .iter()
        .filter_map(|m| match &**m {
            Message::ToolResult(r) => Some((r.tool.clone(), r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("mcp__files__shout".into(), false),
            ("mcp__web__picture".into(), false),
            ("mcp__web__fail".into(), true),
            ("mcp__files__fail".into(), true),
        ]
    );
}

#[tokio::test]
async fn policy_approvals_and_a_server_that_dies_mid_call() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let marks_file = dir.path().join("marks");
    let servers = json!({
        "files": sdk_stdio(&marks_file, json!({})),
        "asks": sdk_stdio(&dir.path().join("marks-asks"), json!({"requireApproval": true})),
        "off": sdk_stdio(&dir.path().join("marks-off"), json!({"enabled": false})),
    });
    let cfg = mcp_config(
        &fake,
        dir.path(),
        servers,
        json!({"tools": {"deny": ["mcp:asks"]}}),
    );
    let runner = mcp_runner(cfg.clone(), &[]).await;
    let off = runner
        .mcp_servers()
        .iter()
        .find(|r| r.server == "off")
        .unwrap();
    assert_eq!(off.state, ServerState::Disabled);
    assert!(!marks_file.with_file_name("marks-off").exists());

    // `mcp:asks` is denied: its tools are not offered and not run.
    let offered: Vec<String> = runner
        .dispatcher()
        .specs(&RunContext::new("test", "m"))
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(
        offered.contains(&"mcp__files__shout".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|n| n.starts_with("mcp__asks__")),
        "{offered:?}"
    );
    let (out, _) = dispatch(&runner, "mcp__asks__shout", json!({"text": "x"})).await;
    assert!(
        out.is_error && out.content.contains("tools.deny contains \"mcp:asks\""),
        "{}",
        out.content
    );

    // Allowed, `requireApproval` asks; unanswered (non-interactive) it is denied.
    let mut allowed = cfg.clone();
    allowed.tools.deny.clear();
    let runner2 = mcp_runner(allowed, &[]).await;
    assert_asked(&runner2, "mcp__asks__shout").await;
    assert!(!marks(&marks_file.with_file_name("marks-asks")).contains("shout"));
    // Schema checks run before the server is asked.
    let (out, _) = dispatch(&runner2, "mcp__files__shout", json!({"text": 5})).await;
    assert!(
        out.is_error && out.content.contains("invalid arguments"),
        "{}",
        out.content
    );
    drop(runner2);

    // A server killed mid-call gives a clear error, and is started again
    // for the next call.
    let (out, _) = dispatch(&runner, "mcp__files__die", json!({})).await;
    assert!(
        out.is_error && out.content.contains("exited during the call"),
        "{}",
        out.content
    );
    let (out, _) = dispatch(&runner, "mcp__files__shout", json!({"text": "again"})).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("AGAIN"), "{}", out.content);
    let pids: std::collections::BTreeSet<String> = marks(&marks_file)
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(pid, _)| pid.to_string()))
        .collect();
    assert_eq!(
        pids.len(),
        2,
        "a new process answered: {}",
        marks(&marks_file)
    );
}

#[tokio::test]
async fn a_slow_call_times_out_and_is_cancelled_on_the_server() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let marks_file = dir.path().join("marks");
    let servers = json!({"files": sdk_stdio(&marks_file, json!({"timeoutMs": 1500}))});
    let runner = mcp_runner(mcp_config(&fake, dir.path(), servers, json!({})), &[]).await;
    let started = std::time::Instant::now();
    let (out, _) = dispatch(&runner, "mcp__files__slow", json!({"seconds": 60})).await;
    assert!(
        out.is_error && out.content.contains("no answer in 1500 ms"),
        "{}",
        out.content
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    eventually("the server to cancel the call", || {
        marks(&marks_file).contains("slow cancelled")
    })
    .await;
    // The connection still serves.
    let (out, _) = dispatch(&runner, "mcp__files__shout", json!({"text": "ok"})).await;
    assert!(out.content.contains("OK"), "{}", out.content);
}

#[tokio::test]
async fn hostile_servers_are_reported_bounded_and_never_fatal() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let servers = json!({
        "silent": mcp_stdio("hostile_server.py", &["silent"], json!({"startTimeoutMs": 1500})),
        "garbage": mcp_stdio("hostile_server.py", &["garbage"], json!({})),
        "huge": mcp_stdio("hostile_server.py", &["huge"], json!({"timeoutMs": 3000})),
        "bad": mcp_stdio("hostile_server.py", &["bad-tools"], json!({})),
        "missing": {"command": "/nonexistent/mcp-server"},
    });
    let runner = mcp_runner(mcp_config(&fake, dir.path(), servers, json!({})), &[]).await;
    let report = |name: &str| {
        runner
            .mcp_servers()
            .iter()
            .find(|r| r.server == name)
            .unwrap()
            .clone()
    };
    let failed = |name: &str| match report(name).state {
        ServerState::Failed(why) => why,
        other => panic!("{name}: {other:?}"),
    };
    assert!(
        failed("silent").contains("no answer to `initialize` in 1500 ms"),
        "{}",
        failed("silent")
    );
    assert!(
        failed("missing").contains("cannot start `/nonexistent/mcp-server`"),
        "{}",
        failed("missing")
    );

    // A server without `server/discover` is met with `initialize` at the
    // previous revision.
    assert_eq!(report("garbage").protocol, "2025-11-25");
    // Lines that are not JSON-RPC are skipped; the server still serves.
    let (out, _) = dispatch(&runner, "mcp__garbage__echo", json!({"text": "fine"})).await;
    assert_eq!(out.content, "\"fine\"");

    // A 50 MB message is dropped unread (maxResultKb), not buffered.
    let (out, _) = dispatch(&runner, "mcp__huge__echo", json!({"text": "x"})).await;
    assert!(
        out.is_error && out.content.contains("maxResultKb"),
        "{}",
        out.content
    );

    // Invalid schemas and a name that collides are not offered; names that
    // do not fit are offered under distinct hashed names.
    let bad = report("bad");
    let withheld: Vec<&str> = bad.withheld.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(withheld.len(), 3, "{bad:?}");
    for name in ["Echo", "listy", "broken"] {
        assert!(withheld.contains(&name), "{name} in {bad:?}");
    }
    let dotted: Vec<&String> = bad
        .tools
        .iter()
        .filter(|(_, remote)| remote.starts_with("dotted"))
        .map(|(offered, _)| offered)
        .collect();
    assert_eq!(dotted.len(), 2, "{bad:?}");
    assert_ne!(dotted[0], dotted[1]);
    let (out, _) = dispatch(&runner, dotted[0], json!({"text": "routed"})).await;
    assert_eq!(out.content, "\"routed\"");
}

#[tokio::test]
async fn a_changed_tool_list_is_served_by_a_new_generation() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let servers = json!({"files": sdk_stdio(&dir.path().join("marks"), json!({}))});
    let cfg = mcp_config(&fake, dir.path(), servers, json!({}));
    let (host, _) = AgentHost::start(cfg, None).await.unwrap();
    let names = |body: &Value| body["tools"].to_string();
    fake.push(tool_call("c1", "mcp__files__grow", json!({})));
    fake.push(text_answer("m1", &["grown"]));
    let request = TurnRequest {
        agent: "main".into(),
        session: None,
        message: "grow".into(),
        images: Vec::new(),
        model: None,
    };
    let reply = host
        .run_turn(&request, &RunContext::new("main", "fake/gpt-5.1"))
        .await
        .unwrap();
    assert!(!names(&fake.requests()[0].body).contains("mcp__files__extra"));
    // At 2026-07-28 the change comes on the `subscriptions/listen` stream,
    // on its own time: wait for it (bounded) before the next turn.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !host.runner().mcp_stale() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server's tools/list_changed never arrived"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let generation = host.generations().number;
    fake.push(tool_call("c2", "mcp__files__extra", json!({})));
    fake.push(text_answer("m2", &["ok"]));
    let again = TurnRequest {
        session: Some(reply.session_id),
        ..request
    };
    host.run_turn(&again, &RunContext::new("main", "fake/gpt-5.1"))
        .await
        .unwrap();
    let requests = fake.requests();
    assert!(names(&requests[2].body).contains("mcp__files__extra"));
    assert!(requests[3].body["input"]
        .to_string()
        .contains("extra answered"));
    assert!(host.generations().number > generation);
}

#[tokio::test]
async fn the_readme_mcp_config_starts_both_servers() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let http = HttpMcpServer::start().await;
    let mut cfg = readme_config("mcp-client-config");
    // Only the server's program, the endpoint and the secret are replaced.
    let files = &mut cfg["mcp"]["servers"]["files"];
    let ours = mcp_stdio("tools_server.py", &["stdio"], json!({}));
    files["args"] = ours["args"].clone();
    files["env"]["PYTHONPATH"] = ours["env"]["PYTHONPATH"].clone();
    let web = &mut cfg["mcp"]["servers"]["web"];
    assert_eq!(web["headers"]["Authorization"], "Bearer ${WEB_MCP_TOKEN}");
    web["url"] = json!(http.url);
    web["headers"]["Authorization"] = json!("Bearer test-token");
    let servers = cfg["mcp"]["servers"].clone();
    let extra = json!({"tools": cfg["tools"].clone()});
    let runner = mcp_runner(mcp_config(&fake, dir.path(), servers, extra), &[]).await;
    for report in runner.mcp_servers() {
        assert_eq!(report.state, ServerState::Ready, "{report:?}");
    }
    assert_asked(&runner, "mcp__web__shout").await;
    let (out, _) = dispatch(&runner, "mcp__files__shout", json!({"text": "readme"})).await;
    assert_eq!(out.content, "\"README\"");
}
