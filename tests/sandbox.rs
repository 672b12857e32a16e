//! The sandbox and limits, proven with a plugin that misbehaves on request.

use clawhost_plugin_runtime::{CallError, LogSource, PluginHost, PluginState};
use clawhost_tests::{call_tool, config, dispatch, host_with, json_of, runner_with};
use serde_json::{json, Value};

async fn call(
    host: &PluginHost,
    tool: &str,
    params: Value,
) -> Result<Result<Value, String>, CallError> {
    // The tool's error as the model reads it.
    call_tool(host, "misbehave", tool, params)
        .await
        .map(|r| r.map_err(|e| e.to_string()))
}

fn limits(timeout_ms: u64, memory_mb: u64, traps: u32) -> Value {
    json!({"memoryMb": memory_mb, "callTimeoutMs": timeout_ms, "maxConsecutiveTraps": traps})
}

#[tokio::test]
async fn an_infinite_loop_is_stopped_by_the_deadline_and_the_next_call_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(500, 64, 3)}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    assert_eq!(
        call(&host, "ping", json!({})).await.unwrap().unwrap()["calls"],
        1
    );
    let err = call(&host, "spin", json!({})).await.unwrap_err();
    assert_eq!(
        err,
        CallError::Timeout {
            id: "misbehave".into(),
            timeout_ms: 500
        }
    );
    // A fresh instance serves the next call (its call counter starts over).
    let pong = call(&host, "ping", json!({})).await.unwrap().unwrap();
    assert_eq!(pong, json!({"pong": true, "calls": 1}));
    let status = &host.statuses()[0];
    assert_eq!(status.state, PluginState::Active);
    assert_eq!(status.instantiations, 2);
    assert_eq!(status.consecutive_failures, 0);
}

#[tokio::test]
async fn unbounded_allocation_is_stopped_by_the_memory_cap() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(10_000, 16, 3)}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let err = call(&host, "hog", json!({})).await.unwrap_err();
    assert_eq!(
        err,
        CallError::MemoryLimit {
            id: "misbehave".into(),
            limit_mb: 16
        }
    );
    assert_eq!(
        call(&host, "ping", json!({})).await.unwrap().unwrap()["pong"],
        true
    );
}

#[tokio::test]
async fn a_plugin_may_have_a_memory_cap_of_its_own() {
    // 16 MiB by default, 48 MiB for misbehave: its hog stops at 48.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(10_000, 16, 3),
            "entries": {"misbehave": {"memoryMb": 48}}}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let err = call(&host, "hog", json!({})).await.unwrap_err();
    assert_eq!(
        err,
        CallError::MemoryLimit {
            id: "misbehave".into(),
            limit_mb: 48
        }
    );
}

#[tokio::test]
async fn a_plugin_that_keeps_failing_is_quarantined_then_retried_after_a_backoff() {
    let dir = tempfile::tempdir().unwrap();
    let mut limits = limits(2000, 64, 2);
    limits["quarantineMs"] = json!(400);
    let cfg = config(json!({"plugins": {"limits": limits}}), dir.path());
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let first = call(&host, "crash", json!({})).await.unwrap_err();
    assert!(
        matches!(&first, CallError::Trapped { id, .. } if id == "misbehave"),
        "{first}"
    );
    assert_eq!(host.statuses()[0].state, PluginState::Active);
    call(&host, "crash", json!({})).await.unwrap_err();
    let PluginState::Quarantined {
        reason,
        retry_in_ms,
    } = host.statuses()[0].state.clone()
    else {
        panic!("plugin should be quarantined after 2 failures in a row");
    };
    assert!(reason.contains("2 failed calls in a row"), "{reason}");
    assert!(reason.contains("trapped"), "{reason}");
    assert!(retry_in_ms <= 400, "{retry_in_ms}");
    // As `plugins list --json` and `/v1/plugins` show it.
    assert_eq!(
        serde_json::to_value(&host.statuses()[0].state).unwrap()["quarantined"]["reason"],
        json!(reason)
    );
    assert_eq!(
        serde_json::to_value(PluginState::Active).unwrap(),
        json!("active")
    );
    // Refused while the backoff runs, with the reason on every refusal.
    let err = call(&host, "ping", json!({})).await.unwrap_err();
    assert!(matches!(err, CallError::Quarantined { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("plugin `misbehave` is quarantined (2 failed"),
        "{err}"
    );
    // Once it passed, a trial call is let through; it fails: twice as long.
    tokio::time::sleep(std::time::Duration::from_millis(450)).await;
    call(&host, "crash", json!({})).await.unwrap_err();
    let PluginState::Quarantined { retry_in_ms, .. } = host.statuses()[0].state.clone() else {
        panic!("a failed trial renews the quarantine");
    };
    assert!((450..=800).contains(&retry_in_ms), "{retry_in_ms}");
    assert!(call(&host, "ping", json!({})).await.is_err());
    // A served trial ends it.
    tokio::time::sleep(std::time::Duration::from_millis(850)).await;
    let pong = call(&host, "ping", json!({})).await.unwrap().unwrap();
    assert_eq!(pong["pong"], true);
    let status = &host.statuses()[0];
    assert_eq!(status.state, PluginState::Active);
    assert_eq!(status.consecutive_failures, 0);
}

#[tokio::test]
async fn a_quarantined_fail_closed_hook_says_so_on_every_blocked_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut limits = limits(2000, 64, 1);
    limits["quarantineMs"] = json!(60_000);
    let runner = runner_with(
        config(json!({"plugins": {"limits": limits}}), dir.path()),
        &["test-misbehave"],
    )
    .await;
    let (out, _) = dispatch(&runner, "ping", json!({"hook": "crash"})).await;
    assert!(out.is_error, "{}", out.content);
    for _ in 0..3 {
        let (out, _) = dispatch(&runner, "ping", json!({})).await;
        assert!(
            out.is_error
                && out
                    .content
                    .contains("is quarantined (1 failed calls in a row"),
            "{}",
            out.content
        );
    }
}

#[tokio::test]
async fn a_cancelled_call_discards_its_instance_and_is_not_the_plugins_failure() {
    // A caller that gives up (Ctrl-C, `--timeout`, a dropped connection)
    // drops the call's future while the guest runs: in a tool and in a
    // fail-closed hook, three times over a limit of 2.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(5000, 64, 2)}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-misbehave"]).await;
    let host = runner.plugins();
    let short = std::time::Duration::from_millis(100);
    for _ in 0..3 {
        let spin = call(host, "spin", json!({}));
        assert!(tokio::time::timeout(short, spin).await.is_err());
        let hook = dispatch(&runner, "ping", json!({"hook": "spin"}));
        assert!(tokio::time::timeout(short, hook).await.is_err());
    }
    let status = &host.statuses()[0];
    assert_eq!(status.state, PluginState::Active);
    assert_eq!(status.consecutive_failures, 0);
    // Each call after a cancellation gets a fresh instance: the first
    // counts 1 call, and the next 99 go on from there.
    for n in 1..=100 {
        let (out, _) = dispatch(&runner, "ping", json!({})).await;
        assert!(!out.is_error, "call {n}: {}", out.content);
        assert_eq!(json_of(&out)["calls"], n);
    }
    assert_eq!(host.statuses()[0].state, PluginState::Active);
}

#[tokio::test]
async fn without_a_grant_a_plugin_sees_no_files_and_no_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("visible.txt"), "host file").unwrap();
    std::env::set_var("MISBEHAVE_SECRET", "from-the-host");
    let cfg = config(json!({}), dir.path());
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    for path in [
        "/etc/passwd",
        dir.path().join("visible.txt").to_str().unwrap(),
        "/data/visible.txt",
    ] {
        let result = call(&host, "read_path", json!({"path": path}))
            .await
            .unwrap();
        assert!(result.is_err(), "{path} must not be readable: {result:?}");
    }
    let env = call(&host, "env", json!({"name": "MISBEHAVE_SECRET"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(env["value"], Value::Null);
    assert!(host.statuses()[0].grants.dirs.is_empty());
}

#[tokio::test]
async fn grants_are_the_intersection_of_manifest_and_operator() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::create_dir_all(dir.path().join("extra")).unwrap();
    std::fs::create_dir_all(dir.path().join("other")).unwrap();
    std::fs::write(dir.path().join("data/in.txt"), "inside").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "outside").unwrap();
    std::fs::write(dir.path().join("other/o.txt"), "other").unwrap();
    std::env::set_var("MISBEHAVE_GREETING", "hello");
    std::env::set_var("NOT_REQUESTED", "nope");
    let cfg = config(
        json!({"plugins": {"entries": {"misbehave": {"grants": {
            "filesystem": [
                // The manifest asks read-write; the operator grants read-only: read-only wins.
                {"guestPath": "/data", "hostPath": "data", "access": "read-only"},
                // The manifest asks read-only; the operator's read-write does not widen it.
                {"guestPath": "/extra", "hostPath": "extra", "access": "read-write"},
                // Not requested by the manifest: not mounted.
                {"guestPath": "/other", "hostPath": "other", "access": "read-write"}
            ],
            "env": ["MISBEHAVE_GREETING", "NOT_REQUESTED"]
        }}}}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let read = call(&host, "read_path", json!({"path": "/data/in.txt"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read["text"], "inside");
    for escape in ["/data/../outside.txt", "/outside.txt", "/other/o.txt"] {
        let result = call(&host, "read_path", json!({"path": escape}))
            .await
            .unwrap();
        assert!(result.is_err(), "{escape} must be refused: {result:?}");
    }
    for target in ["/data/new.txt", "/extra/new.txt"] {
        let write = call(&host, "write_path", json!({"path": target, "text": "x"}))
            .await
            .unwrap();
        assert!(
            write.is_err(),
            "read-only {target} must refuse writes: {write:?}"
        );
    }
    assert!(!dir.path().join("data/new.txt").exists());
    let greeting = call(&host, "env", json!({"name": "MISBEHAVE_GREETING"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(greeting["value"], "hello");
    let not_requested = call(&host, "env", json!({"name": "NOT_REQUESTED"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(not_requested["value"], Value::Null);
    let grants = &host.statuses()[0].grants;
    assert_eq!(
        grants
            .dirs
            .iter()
            .map(|d| d.guest_path.as_str())
            .collect::<Vec<_>>(),
        vec!["/data", "/extra"]
    );
}

#[tokio::test]
async fn a_read_write_grant_allows_writes_inside_it_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"misbehave": {"grants": {"filesystem": [
            {"guestPath": "/data", "hostPath": "data", "access": "read-write"}]}}}}}),
        dir.path(),
    );
    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    call(
        &host,
        "write_path",
        json!({"path": "/data/out.txt", "text": "written"}),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("data/out.txt")).unwrap(),
        "written"
    );
    let escape = call(
        &host,
        "write_path",
        json!({"path": "/data/../escaped.txt", "text": "x"}),
    )
    .await
    .unwrap();
    assert!(escape.is_err(), "{escape:?}");
    assert!(!dir.path().join("escaped.txt").exists());
}

#[tokio::test]
async fn a_grant_to_a_missing_directory_refuses_the_plugin_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"misbehave": {"grants": {"filesystem": [
            {"guestPath": "/data", "hostPath": "does-not-exist"}]}}}}}),
        dir.path(),
    );
    let err = host_with(&cfg, &["test-misbehave"])
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("`misbehave`") && err.contains("/data") && err.contains("does-not-exist"),
        "{err}"
    );
}

#[tokio::test]
async fn stdout_and_stderr_are_captured_into_the_plugin_log() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_with(&config(json!({}), dir.path()), &["test-misbehave"])
        .await
        .unwrap();
    call(&host, "print", json!({"text": "hello log"}))
        .await
        .unwrap()
        .unwrap();
    let logs = host.plugin("misbehave").unwrap().logs();
    assert!(
        logs.iter()
            .any(|l| l.source == LogSource::Stdout && l.message == "hello log"),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.source == LogSource::Stderr && l.message == "err: hello log"),
        "{logs:?}"
    );
}

#[tokio::test]
async fn a_hook_that_traps_or_times_out_blocks_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"limits": limits(500, 64, 10)}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["test-misbehave"]).await;
    let (out, _) = dispatch(&runner, "ping", json!({"hook": "crash"})).await;
    assert!(
        out.is_error
            && out
                .content
                .contains("before_tool_call hook of plugin `misbehave` failed"),
        "{}",
        out.content
    );
    let (out, _) = dispatch(&runner, "ping", json!({"hook": "spin"})).await;
    assert!(
        out.is_error && out.content.contains("deadline"),
        "{}",
        out.content
    );
    let (out, _) = dispatch(&runner, "ping", json!({})).await;
    assert_eq!(json_of(&out)["pong"], true);
}
