//! The installed binary against a hostile plugin: a guest stuck in a
//! blocking host read past its deadline does not keep `clawhost` from
//! exiting, and what the plugin says reaches the terminal without escapes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{plugins, write_config};
use serde_json::json;

#[test]
fn a_guest_blocked_on_a_fifo_does_not_keep_the_host_from_exiting() {
    let root = tempfile::tempdir().unwrap();
    let (rw, ro) = (root.path().join("rw"), root.path().join("ro"));
    for d in [&rw, &ro] {
        std::fs::create_dir_all(d).unwrap();
    }
    // A FIFO no one writes to: reading it blocks a host thread forever.
    let status = Command::new("mkfifo")
        .arg(ro.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let script = root.path().join("script.json");
    std::fs::write(
        &script,
        json!([
            {"toolCalls": [{"name": "block_read", "arguments": {"path": "/ro/pipe"}}]},
            {"toolCalls": [{"name": "write", "arguments": {"path": "/rw/out", "text": "\u{1b}]0;owned\u{7}\u{1b}[2Jdone"}}]},
            {"answer": "finished \u{1b}[31mred"}
        ])
        .to_string(),
    )
    .unwrap();
    let config = write_config(
        root.path(),
        json!({
            "plugins": {
                "paths": [plugins().join("test-escape")],
                "limits": {"callTimeoutMs": 300},
                "entries": {"escape": {"grants": {"filesystem": [
                    {"guestPath": "/rw", "hostPath": rw, "access": "read-write"},
                    {"guestPath": "/ro", "hostPath": ro, "access": "read-only"}
                ]}}}
            },
            "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
            "agents": {"defaults": {"model": "scripted/test"}}
        }),
    );
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["run", "-c"])
        .arg(&config)
        .arg("go")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("clawhost did not exit with a guest stuck in a FIFO read");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(stdout.contains("deadline"), "{stdout}");
    assert!(stdout.contains("finished"), "{stdout}");
    // Escape sequences from the model and the plugin are shown, not obeyed.
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "{stdout:?}"
    );
    assert!(stdout.contains("\\u{1b}"), "{stdout}");
}
