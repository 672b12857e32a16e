//! `clawhost run` takes the same path as `chat`: the prompt hooks, the
//! session hooks and `agent_end` fire for it too.

mod common;

use std::process::Command;

use common::{plugins, write_config};
use serde_json::json;

#[test]
fn run_fires_the_prompt_session_and_agent_end_hooks() {
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("script.json");
    std::fs::write(&script, json!([{"answer": "all done"}]).to_string()).unwrap();
    let config = write_config(
        root.path(),
        json!({
            "plugins": {
                "paths": [plugins().join("context-hooks")],
                "entries": {"context-hooks": {
                    "config": {"prepend": "[ticket 42]"},
                    "hooks": {"allowConversationAccess": true}
                }}
            },
            "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
            "agents": {"defaults": {"model": "scripted/test"}}
        }),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["run", "-c"])
        .arg(&config)
        .arg("hello")
        .env("CLAWHOST_LOG", "warn,clawhost::plugin=info")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}\n{stderr}");
    assert!(out.status.success(), "{all}");
    assert!(all.contains("all done"), "{all}");
    assert!(
        all.contains("before_prompt_build [context-hooks]") && all.contains(": edit"),
        "{all}"
    );
    for line in [
        "observed session_start ",
        "observed agent_end success=true",
        "observed session_end ",
        "observed llm_input",
    ] {
        assert!(all.contains(line), "missing `{line}` in:\n{all}");
    }
}

/// A config where `policy-guard` asks before every `echo`, and a scripted
/// model that calls `echo` once per turn and then answers.
fn approval_config(root: &std::path::Path, approvals: serde_json::Value) -> std::path::PathBuf {
    let script = root.join("script.json");
    std::fs::write(
        &script,
        json!([
            {"toolCalls": [{"name": "echo", "arguments": {"text": "{{user}}"}}]},
            {"answer": "done: {{results}}"}
        ])
        .to_string(),
    )
    .unwrap();
    write_config(
        root,
        json!({
            "plugins": {
                "paths": [plugins().join("policy-guard")],
                "entries": {"policy-guard": {"config": {"approveTools": ["echo"]}}}
            },
            "approvals": approvals,
            "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
            "agents": {"defaults": {"model": "scripted/test"}}
        }),
    )
}

/// `clawhost chat` on `config` with `input` typed (then end of input):
/// whether it succeeded, and its stdout and stderr.
fn chat(config: &std::path::Path, input: &[u8]) -> (bool, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["chat", "-c"])
        .arg(config)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    let all = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), all)
}

#[test]
fn chat_asks_the_operator_and_allow_always_stands_for_the_session() {
    let root = tempfile::tempdir().unwrap();
    let config = approval_config(root.path(), json!({}));
    // An answer the host does not know is asked again; then `a`.
    let (ok, all) = chat(&config, b"first\nmaybe\na\nsecond\n/quit\n");
    assert!(ok, "{all}");
    assert_eq!(
        all.matches("approval needed (warning) · plugin policy-guard · tool echo")
            .count(),
        1,
        "{all}"
    );
    assert!(
        all.contains("answer o (once), a (always for this session) or d (deny)"),
        "{all}"
    );
    assert!(all.contains("→ allow-always\n"), "{all}");
    assert!(all.contains("→ allow-always (remembered)"), "{all}");
    assert!(all.contains("echo returned: {\"text\":\"first\"}"), "{all}");
    assert!(
        all.contains("echo returned: {\"text\":\"second\"}"),
        "{all}"
    );
}

#[test]
fn chat_input_ending_while_asked_cancels_the_call() {
    let root = tempfile::tempdir().unwrap();
    let config = approval_config(root.path(), json!({}));
    let (ok, all) = chat(&config, b"first\n");
    assert!(ok, "{all}");
    assert!(all.contains("the answer was cancelled"), "{all}");
}

#[test]
fn run_answers_approvals_by_the_configured_policy_deny_by_default() {
    for (approvals, expect) in [
        (json!({}), "the answer was deny"),
        (
            json!({"nonInteractive": "allow"}),
            "echo returned: {\"text\":\"hello\"}",
        ),
    ] {
        let root = tempfile::tempdir().unwrap();
        let config = approval_config(root.path(), approvals);
        let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
            .args(["run", "-c"])
            .arg(&config)
            .arg("hello")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        assert!(stdout.contains(expect), "missing `{expect}` in:\n{stdout}");
        assert!(
            !stdout.contains("approval needed"),
            "run asks nobody:\n{stdout}"
        );
    }
}

#[test]
fn sessions_show_renders_a_readable_transcript_and_json_on_request() {
    let root = tempfile::tempdir().unwrap();
    let config = approval_config(root.path(), json!({"nonInteractive": "allow"}));
    let (ok, all) = chat(&config, b"first words\na\n/quit\n");
    assert!(ok, "{all}");
    let sessions = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
            .arg("sessions")
            .args(args)
            .arg("-c")
            .arg(&config)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let list = sessions(&["list"]);
    let id = list
        .split_whitespace()
        .next()
        .expect("one session")
        .to_string();
    let shown = sessions(&["show", &id]);
    for line in [
        "user   › first words",
        "model  › calls echo {\"text\":\"first words\"}",
        "tool   ›     echo (",
        "model  › done: ",
    ] {
        assert!(shown.contains(line), "missing `{line}` in:\n{shown}");
    }
    let raw = sessions(&["show", &id, "--json"]);
    let entries: Vec<serde_json::Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(entries.len() >= 4, "{raw}");
    assert!(entries.iter().all(|e| e["id"].is_string()));
}
