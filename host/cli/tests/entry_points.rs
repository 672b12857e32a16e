//! `clawhost run` takes the same path as `chat`: the prompt hooks, the
//! session hooks and `agent_end` fire for it too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

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

/// A config whose scripted model runs `exec` with `command` (allowlisted),
/// then answers.
fn exec_config(root: &std::path::Path, command: &str) -> std::path::PathBuf {
    let script = root.join("script.json");
    std::fs::write(
        &script,
        json!([
            {"toolCalls": [{"name": "exec", "arguments": {"command": command}}]},
            {"answer": "ran it"}
        ])
        .to_string(),
    )
    .unwrap();
    write_config(
        root,
        json!({
            "plugins": {},
            "tools": {"exec": {"allow": ["sleep"]}},
            "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
            "agents": {"defaults": {"model": "scripted/test"}}
        }),
    )
}

#[test]
fn run_timeout_aborts_the_turn_stops_the_tool_and_stores_what_was_done() {
    let root = tempfile::tempdir().unwrap();
    // A duration of its own names this run's process among any others.
    let command = format!("sleep 47.{}", std::process::id());
    let config = exec_config(root.path(), &command);
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["run", "--timeout", "1", "-c"])
        .arg(&config)
        .arg("take your time")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the turn was not stopped at its timeout"
    );
    let id = stderr
        .split("stored in session ")
        .nth(1)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| panic!("no session named in: {stderr}"));
    assert_no_process(&command);
    let shown = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["sessions", "show", "--json", &id, "-c"])
        .arg(&config)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("take your time"), "{shown}");
    assert!(shown.contains("\"exec\""), "the tool call is kept: {shown}");
    assert!(shown.contains("turn_aborted"), "{shown}");
}

#[test]
fn run_json_prints_each_event_as_it_happens_and_names_the_session() {
    let root = tempfile::tempdir().unwrap();
    let config = approval_config(root.path(), json!({"nonInteractive": "allow"}));
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["run", "--json", "-c"])
        .arg(&config)
        .arg("hello")
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    for kind in [
        "user_message",
        "model_reply",
        "tool_result",
        "text_delta",
        "turn_end",
    ] {
        assert!(kinds.contains(&kind), "no {kind} in {kinds:?}");
    }
    let end = lines.last().unwrap();
    let id = end["session_id"].as_str().unwrap();
    // The session was saved: a second run continues it.
    let again = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["run", "--session", id, "-c"])
        .arg(&config)
        .arg("again")
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn ctrl_c_in_chat_aborts_the_turn_and_the_chat_goes_on() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let root = tempfile::tempdir().unwrap();
    let command = format!("sleep 48.{}", std::process::id());
    let config = exec_config(root.path(), &command);
    let mut child = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["chat", "-c"])
        .arg(&config)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = String::new();
    let mut wait_for = |mark: &str| {
        while !seen.contains(mark) {
            match lines.recv_timeout(std::time::Duration::from_secs(20)) {
                Ok(line) => {
                    seen.push_str(&line);
                    seen.push('\n');
                }
                Err(_) => panic!("no `{mark}` in:\n{seen}"),
            }
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "take your time").unwrap();
    wait_for("calls exec");
    // The command is running: interrupt the chat as a terminal would.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    wait_for("turn aborted");
    writeln!(stdin, "/usage").unwrap();
    wait_for("tokens in this chat");
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "the chat went on and ended cleanly:\n{seen}"
    );
    assert_no_process(&command);
}

/// No process runs `command` (the tool's process died with its turn).
fn assert_no_process(command: &str) {
    let running = Command::new("pgrep")
        .args(["-f", command])
        .output()
        .unwrap();
    assert!(
        running.stdout.is_empty(),
        "`{command}` outlived the turn that ran it"
    );
}

#[test]
fn chat_on_a_terminal_edits_lines_and_keeps_history() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let root = tempfile::tempdir().unwrap();
    let config = approval_config(root.path(), json!({"nonInteractive": "allow"}));
    let state = root.path().join("state");
    // `script` (util-linux) runs the chat on a pseudo-terminal.
    let mut child = Command::new("script")
        .args(["-qfec"])
        .arg(format!(
            "{} chat -c {}",
            env!("CARGO_BIN_EXE_clawhost"),
            config.display()
        ))
        .arg("/dev/null")
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A typo mended with backspace; the approval answered at its own prompt.
    stdin.write_all(b"hellp\x7fo\r").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    stdin.write_all(b"o\r").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    stdin.write_all(b"/quit\r").unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{out}");
    assert!(out.contains("user   › hello"), "{out}");
    assert!(out.contains("echo returned: {\"text\":\"hello\"}"), "{out}");
    let history = std::fs::read_to_string(state.join("clawhost/chat_history")).unwrap();
    assert!(history.lines().any(|l| l == "hello"), "{history}");
}

#[test]
fn images_attach_to_run_and_chat_messages_and_are_checked_first() {
    let root = tempfile::tempdir().unwrap();
    let config = approval_config(root.path(), json!({"nonInteractive": "allow"}));
    let png = root.path().join("pic.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let text = root.path().join("notes.png");
    std::fs::write(&text, "not an image").unwrap();
    let run = |image: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_clawhost"))
            .args(["run", "--json", "--image"])
            .arg(image)
            .arg("-c")
            .arg(&config)
            .arg("what is this")
            .output()
            .unwrap()
    };
    let out = run(&png);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(
        (first["event"].as_str(), first["images"].as_u64()),
        (Some("user_message"), Some(1)),
        "{first}"
    );
    // A file named .png whose bytes are not an image is refused before any turn.
    let out = run(&text);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a PNG, JPEG, GIF or WebP image"), "{err}");

    let typed = format!(
        "/image {}\nlook at it\na\n/image {}\n/quit\n",
        png.display(),
        root.path().join("missing.png").display()
    );
    let (ok, all) = chat(&config, typed.as_bytes());
    assert!(ok, "{all}");
    assert!(all.contains("image attached (image/png"), "{all}");
    assert!(all.contains("cannot open image"), "{all}");
    let list = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["sessions", "list", "-c"])
        .arg(&config)
        .output()
        .unwrap();
    let shown: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|id| {
            let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
                .args(["sessions", "show", id, "-c"])
                .arg(&config)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .collect();
    assert!(
        shown
            .iter()
            .any(|s| s.contains("user   › look at it [1 image]")),
        "{shown:?}"
    );
}
