//! The built-in workspace tools, called through the runner's one dispatch
//! path (policy, schema, hooks, approvals): each tool's work and its refusals.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_agent_core::{
    ApprovalDecision, Approvals, FixedApprover, RunContext, ToolCallRequest, ToolExecutor,
    ToolOutput, TurnEvent,
};
use clawhost_runner::EmbeddedRunner;
use clawhost_tests::{config, json_of, runner_with};
use serde_json::{json, Value};

/// A runner whose agents work in `root/ws`, with `extra` config merged over.
async fn runner(root: &std::path::Path, extra: Value, plugins: &[&str]) -> EmbeddedRunner {
    let mut cfg = json!({"agents": {"defaults": {"workspace": "ws"}}});
    merge(&mut cfg, extra);
    runner_with(config(cfg, root), plugins).await
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

async fn call(runner: &EmbeddedRunner, ctx: &RunContext, tool: &str, args: Value) -> ToolOutput {
    let call = ToolCallRequest {
        id: "call_1".into(),
        name: tool.into(),
        arguments: args,
    };
    runner.dispatcher().execute(&call, ctx).await
}

fn ctx() -> RunContext {
    RunContext::new("main", "scripted/test")
}

fn err_of(out: &ToolOutput) -> &str {
    assert!(out.is_error, "expected an error, got {}", out.content);
    &out.content
}

#[tokio::test]
async fn file_tools_read_write_edit_patch_and_search_the_workspace() {
    let root = tempfile::tempdir().unwrap();
    let r = runner(root.path(), json!({}), &[]).await;
    let ctx = ctx();
    let out = call(
        &r,
        &ctx,
        "write",
        json!({"path": "src/lib.rs", "content": "pub fn one() -> u32 {\n    1\n}\n"}),
    )
    .await;
    assert_eq!(json_of(&out)["bytes"], 30);
    assert!(root.path().join("ws/src/lib.rs").is_file());
    let out = call(
        &r,
        &ctx,
        "read",
        json!({"path": "src/lib.rs", "offset": 2, "limit": 1}),
    )
    .await;
    let read = json_of(&out);
    assert_eq!(read["content"], "2\t    1\n");
    assert_eq!(
        (read["totalLines"].as_u64(), read["truncated"].as_bool()),
        (Some(3), Some(true))
    );
    let out = call(
        &r,
        &ctx,
        "edit",
        json!({"path": "src/lib.rs", "old_string": "    1", "new_string": "    2"}),
    )
    .await;
    assert_eq!(json_of(&out)["replacements"], 1);
    let out = call(
        &r,
        &ctx,
        "edit",
        json!({"path": "src/lib.rs", "old_string": "nowhere", "new_string": "x"}),
    )
    .await;
    assert!(err_of(&out).contains("not found"));
    let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-pub fn one() -> u32 {\n+pub fn two() -> u32 {\n*** Add File: README.md\n+# ws\n*** End Patch";
    let out = call(&r, &ctx, "apply_patch", json!({"input": patch})).await;
    assert_eq!(json_of(&out)["added"], json!(["README.md"]));
    let out = call(
        &r,
        &ctx,
        "grep",
        json!({"pattern": "fn \\w+\\(", "glob": "*.rs"}),
    )
    .await;
    assert_eq!(
        json_of(&out)["matches"],
        json!(["src/lib.rs:1: pub fn two() -> u32 {"])
    );
    let out = call(&r, &ctx, "find", json!({"pattern": "*.md"})).await;
    assert_eq!(json_of(&out)["files"], json!(["README.md"]));
    let out = call(&r, &ctx, "ls", json!({})).await;
    let listed = json_of(&out);
    let names: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["README.md", "src"]);
    // Binary files are not shown.
    std::fs::write(root.path().join("ws/blob.bin"), b"\x00\x01\x02").unwrap();
    let out = call(&r, &ctx, "read", json!({"path": "blob.bin"})).await;
    assert!(err_of(&out).contains("binary"));
    // An image comes back as an image, its type read from its bytes.
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01";
    std::fs::write(root.path().join("ws/shot.dat"), png).unwrap();
    let out = call(&r, &ctx, "read", json!({"path": "shot.dat"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        out.content,
        "Read image file shot.dat [image/png, 20 bytes]"
    );
    assert_eq!(out.images.len(), 1);
    assert_eq!(out.images[0].media_type(), Some("image/png"));
    // One too large is refused before it is read.
    let mut big = png.to_vec();
    big.resize(clawhost_agent_core::MAX_IMAGE_BYTES + 1, 0);
    std::fs::write(root.path().join("ws/big.png"), big).unwrap();
    let out = call(&r, &ctx, "read", json!({"path": "big.png"})).await;
    assert!(err_of(&out).contains("at most"), "{out:?}");
}

#[tokio::test]
async fn no_file_tool_reaches_outside_the_workspace() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("secret.txt"), "s3cret").unwrap();
    let r = runner(root.path(), json!({}), &[]).await;
    let ctx = ctx();
    std::fs::create_dir_all(root.path().join("ws")).unwrap();
    std::os::unix::fs::symlink(root.path(), root.path().join("ws/up")).unwrap();
    std::os::unix::fs::symlink(root.path().join("secret.txt"), root.path().join("ws/s.txt"))
        .unwrap();
    let secret = root
        .path()
        .join("secret.txt")
        .to_string_lossy()
        .into_owned();
    for (tool, args) in [
        ("read", json!({"path": "../secret.txt"})),
        ("read", json!({"path": secret})),
        ("read", json!({"path": "up/secret.txt"})),
        ("read", json!({"path": "s.txt"})),
        ("write", json!({"path": "../x.txt", "content": "x"})),
        ("write", json!({"path": "up/x.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "s.txt", "old_string": "s3cret", "new_string": "x"}),
        ),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Delete File: up/secret.txt\n*** End Patch"}),
        ),
        ("ls", json!({"path": "up"})),
        ("find", json!({"pattern": "*", "path": "up"})),
        ("grep", json!({"pattern": "s3cret", "path": "up"})),
        ("exec", json!({"command": "true", "cwd": "up"})),
    ] {
        let out = call(&r, &ctx, tool, args.clone()).await;
        assert!(out.is_error, "{tool} {args}: {}", out.content);
        assert!(!out.content.contains("s3cret"), "{tool}: {}", out.content);
    }
    // Searching the workspace does not follow the symlinks out.
    let out = call(&r, &ctx, "grep", json!({"pattern": "s3cret"})).await;
    assert_eq!(json_of(&out)["matches"], json!([]));
    assert_eq!(
        std::fs::read_to_string(root.path().join("secret.txt")).unwrap(),
        "s3cret"
    );
    assert!(!root.path().join("x.txt").exists());
}

#[tokio::test]
async fn a_hook_and_the_policy_govern_built_in_tools_like_any_other() {
    let root = tempfile::tempdir().unwrap();
    let extra = json!({
        "plugins": {"entries": {"policy-guard": {"config": {"blockWords": ["password"]}}}},
        "tools": {"profile": "coding", "deny": ["grep"]}
    });
    let r = runner(root.path(), extra, &["policy-guard"]).await;
    let ctx = ctx();
    let out = call(
        &r,
        &ctx,
        "write",
        json!({"path": "a.txt", "content": "the password is x"}),
    )
    .await;
    assert!(err_of(&out).contains("blocked"));
    assert!(!root.path().join("ws/a.txt").exists());
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { plugin, decision, .. } if plugin == "policy-guard" && decision.starts_with("block"))));
    // `coding` offers files and processes, not the web; `deny` still wins.
    let offered: Vec<String> = r
        .dispatcher()
        .specs(&ctx)
        .into_iter()
        .map(|s| s.name)
        .collect();
    for name in [
        "read",
        "write",
        "edit",
        "apply_patch",
        "ls",
        "find",
        "exec",
        "process",
    ] {
        assert!(offered.iter().any(|o| o == name), "{name} in {offered:?}");
    }
    assert!(
        !offered
            .iter()
            .any(|o| o == "web_fetch" || o == "grep" || o == "echo"),
        "{offered:?}"
    );
    let out = call(&r, &ctx, "web_fetch", json!({"url": "https://example.com"})).await;
    assert!(err_of(&out).contains("tools.profile is coding"));

    // An agent's own policy: offered and enforced for its runs only.
    let extra = json!({"agents": {"list": [
        {"id": "main"},
        {"id": "reviewer", "tools": {"profile": "minimal"}}
    ]}});
    let r = runner(root.path(), extra, &[]).await;
    let reviewer = RunContext::new("reviewer", "scripted/test");
    let offered: Vec<String> = r
        .dispatcher()
        .specs(&reviewer)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(offered.is_empty(), "{offered:?}");
    let out = call(&r, &reviewer, "read", json!({"path": "a.txt"})).await;
    assert!(err_of(&out).contains("tools.profile is minimal"));
    assert!(r.dispatcher().specs(&ctx).iter().any(|s| s.name == "read"));
}

#[tokio::test]
async fn exec_asks_the_operator_unless_allowlisted_and_is_bounded() {
    let root = tempfile::tempdir().unwrap();
    let r = runner(root.path(), json!({}), &[]).await;
    // Nobody to ask: denied (fails closed), and the command never ran.
    let ctx = ctx();
    let out = call(&r, &ctx, "exec", json!({"command": "touch ran"})).await;
    assert!(
        err_of(&out).contains("the host asked for approval"),
        "{}",
        out.content
    );
    assert!(!root.path().join("ws/ran").exists());
    // An operator who approves: it runs, in the workspace, without the host's secrets.
    let mut approved = RunContext::new("main", "scripted/test");
    approved.approvals = Approvals(Arc::new(FixedApprover(ApprovalDecision::AllowOnce)));
    // (cargo gives a test this variable; a command must not see it.)
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let out = call(&r, &approved, "exec", json!({"command": "touch ran; pwd; echo \"${CARGO_MANIFEST_DIR:-unset}\"; echo err >&2; exit 3"})).await;
    let run = json_of(&out);
    assert_eq!(run["exitCode"], 3);
    let ws = root.path().join("ws").canonicalize().unwrap();
    assert_eq!(run["stdout"], format!("{}\nunset\n", ws.display()));
    assert_eq!(run["stderr"], "err\n");
    assert!(root.path().join("ws/ran").exists());
    assert!(approved.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::Approval { plugin, decision, .. } if plugin == "clawhost" && decision == "allow-once")));

    // Allowlisted commands run unasked; the time limit kills the whole group;
    // output is capped.
    let r = runner(
        root.path(),
        json!({"tools": {"exec": {"allow": ["sleep", "head -c"], "maxOutputKb": 1}}}),
        &[],
    )
    .await;
    let started = Instant::now();
    let out = call(
        &r,
        &ctx,
        "exec",
        json!({"command": "sleep 30", "timeout_ms": 300}),
    )
    .await;
    assert_eq!(json_of(&out)["timedOut"], true);
    assert!(started.elapsed() < Duration::from_secs(10));
    let out = call(
        &r,
        &ctx,
        "exec",
        json!({"command": "head -c 100000 /dev/zero"}),
    )
    .await;
    let run = json_of(&out);
    assert_eq!(run["stdout"].as_str().unwrap().len(), 1024);
    assert_eq!(run["truncatedBytes"], 100000 - 1024);
    // Shell syntax is never allowlisted.
    let out = call(
        &r,
        &ctx,
        "exec",
        json!({"command": "sleep 0; touch sneaky"}),
    )
    .await;
    assert!(err_of(&out).contains("approval"));
    assert!(!root.path().join("ws/sneaky").exists());
}

#[tokio::test]
async fn a_background_command_is_polled_and_killed_by_its_agent_only() {
    let root = tempfile::tempdir().unwrap();
    let r = runner(
        root.path(),
        json!({"tools": {"exec": {"allow": ["*"]}}}),
        &[],
    )
    .await;
    let ctx = ctx();
    let out = call(
        &r,
        &ctx,
        "exec",
        json!({"command": "echo started; sleep 0.3; echo done", "background": true}),
    )
    .await;
    let id = json_of(&out)["processId"].as_str().unwrap().to_string();
    let other = RunContext::new("other", "scripted/test");
    let out = call(&r, &other, "process", json!({"action": "poll", "id": id})).await;
    assert!(err_of(&out).contains("no background process"));
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = call(&r, &ctx, "process", json!({"action": "poll", "id": id})).await;
        let poll = json_of(&out);
        seen.push_str(poll["stdout"].as_str().unwrap());
        if poll["running"] == false {
            assert_eq!(poll["exitCode"], 0);
            break;
        }
        assert!(Instant::now() < deadline, "still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen, "started\ndone\n");
    let out = call(
        &r,
        &ctx,
        "exec",
        json!({"command": "sleep 30", "background": true}),
    )
    .await;
    let id = json_of(&out)["processId"].as_str().unwrap().to_string();
    let out = call(&r, &ctx, "process", json!({"action": "list"})).await;
    assert_eq!(json_of(&out)["processes"][0]["running"], true);
    let out = call(&r, &ctx, "process", json!({"action": "kill", "id": id})).await;
    assert_eq!(json_of(&out)["killed"], true);
}

#[tokio::test]
async fn web_fetch_refuses_private_addresses_unless_allowed_and_caps_the_body() {
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/page",
            get(|| async {
                axum::response::Html(
                    "<html><body><h1>Title</h1><p>Hello <b>web</b></p></body></html>",
                )
            }),
        )
        .route("/big", get(|| async { "x".repeat(10_000) }))
        .route(
            "/hop",
            get(|| async { axum::response::Redirect::temporary("/page") }),
        )
        .route(
            "/loop",
            get(|| async { axum::response::Redirect::temporary("/loop") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let root = tempfile::tempdir().unwrap();
    let ctx = ctx();

    let r = runner(root.path(), json!({}), &[]).await;
    let out = call(
        &r,
        &ctx,
        "web_fetch",
        json!({"url": format!("http://{addr}/page")}),
    )
    .await;
    assert!(
        err_of(&out).contains("not a public address"),
        "{}",
        out.content
    );
    let out = call(
        &r,
        &ctx,
        "web_fetch",
        json!({"url": format!("http://localhost:{}/page", addr.port())}),
    )
    .await;
    assert!(
        err_of(&out).contains("not a public address"),
        "{}",
        out.content
    );
    let out = call(&r, &ctx, "web_fetch", json!({"url": "file:///etc/passwd"})).await;
    assert!(
        err_of(&out).contains("only http and https"),
        "{}",
        out.content
    );

    let r = runner(
        root.path(),
        json!({"tools": {"web": {"allowPrivate": true, "maxKb": 1}}}),
        &[],
    )
    .await;
    let out = call(
        &r,
        &ctx,
        "web_fetch",
        json!({"url": format!("http://{addr}/hop")}),
    )
    .await;
    let page = json_of(&out);
    let text = page["content"].as_str().unwrap();
    assert!(
        text.contains("Title") && text.contains("Hello") && !text.contains("<p>"),
        "{text}"
    );
    assert!(page["url"].as_str().unwrap().ends_with("/page"));
    let out = call(
        &r,
        &ctx,
        "web_fetch",
        json!({"url": format!("http://{addr}/big")}),
    )
    .await;
    let big = json_of(&out);
    assert_eq!(
        (
            big["content"].as_str().unwrap().len(),
            big["truncated"].as_bool()
        ),
        (1024, Some(true))
    );
    let out = call(
        &r,
        &ctx,
        "web_fetch",
        json!({"url": format!("http://{addr}/loop")}),
    )
    .await;
    assert!(err_of(&out).contains("redirects"));
}

#[tokio::test]
async fn a_plugin_tool_named_like_a_built_in_keeps_loading_and_the_built_in_stays() {
    // `test-escape` (built before the built-in tools existed) has a `write`:
    // the plugin loads, its `write` is not offered (without
    // `replaceBuiltins`), and `write` is the host's.
    let root = tempfile::tempdir().unwrap();
    let r = runner(root.path(), json!({}), &["test-escape"]).await;
    assert!(r.refused().is_empty());
    assert!(r.plugins().plugin("escape").is_some());
    assert!(r
        .withheld()
        .iter()
        .any(|w| w.plugin == "escape" && w.tool == "write"));
    let out = call(
        &r,
        &ctx(),
        "write",
        json!({"path": "a.txt", "content": "x"}),
    )
    .await;
    assert!(!out.is_error, "the built-in write: {}", out.content);
    assert_eq!(
        std::fs::read_to_string(root.path().join("ws/a.txt")).unwrap(),
        "x"
    );
}

#[test]
fn every_built_in_tool_schema_compiles() {
    // A start registers the built-in tools without compiling their schemas
    // (each compiles at its tool's first call): a broken one is caught here.
    let root = tempfile::tempdir().unwrap();
    let tools = clawhost_runner::host_tools(&config(json!({}), root.path()), &Default::default());
    assert!(tools.len() >= 8, "{}", tools.len());
    for tool in tools {
        let spec = tool.spec();
        if let Err(e) = clawhost_tools::compile_schema(spec) {
            panic!("{}: {e}", spec.name);
        }
    }
}
