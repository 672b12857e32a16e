//! `clawhost mcp serve` driven by the official Python SDK's client (PyPI
//! `mcp`): over stdio (the protocol the two negotiate, and the previous
//! revision's handshake with elicitation) and Streamable HTTP with a token;
//! and by the MCP Inspector's CLI (npm), given the README's `mcpServers`
//! entry as its config file.
//! The WASM tools, a host tool, a blocked call, an approval, an unknown
//! tool and a cancelled long call, each through the host's dispatch path.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;
#[path = "../../../tests/support/npm.rs"]
#[allow(dead_code)]
mod npm;
#[path = "../../../tests/support/python.rs"]
#[allow(dead_code)]
mod python;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// A config serving text-tools, policy-guard (blocking `read_note`) and
/// test-misbehave (`spin`, `ping`), with a workspace holding `note.txt`.
fn serve_config(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("note.txt"), "a note for MCP\n").unwrap();
    std::fs::write(dir.join("script.json"), "[]").unwrap();
    common::write_config(
        dir,
        json!({
            "plugins": {
                "paths": [common::plugins()],
                "allow": ["text-tools", "policy-guard", "misbehave"],
                "entries": {"policy-guard": {"config": {"blockTools": ["read_note"]}}},
                "limits": {"callTimeoutMs": 60000}
            },
            "tools": {"testFixtures": false},
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json"}}},
            "agents": {"defaults": {"model": "scripted/test", "workspace": dir}}
        }),
    )
}

/// Run the driver script with `args`; its JSON report.
fn drive(args: &[&str], cwd: &Path) -> Value {
    let script = clawhost::build::repo_root().join("tests/fixtures/mcp/drive_clawhost.py");
    let out = python::command()
        .arg(script)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the MCP client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

/// What every transport must show: the tools, their results through the
/// host's hooks, and a cancelled guest.
fn check_scenario(seen: &Value) {
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for name in ["word_count", "read_note", "spin", "ping", "read", "exec"] {
        assert!(tools.contains(&name), "{name} in {tools:?}");
    }
    assert_eq!(seen["word_count"]["isError"], false, "{seen}");
    assert!(
        seen["word_count"]["text"]
            .as_str()
            .unwrap()
            .contains("\"words\":3"),
        "{seen}"
    );
    assert!(
        seen["read"]["text"]
            .as_str()
            .unwrap()
            .contains("a note for MCP"),
        "{seen}"
    );
    assert_eq!(seen["blocked"]["isError"], true, "{seen}");
    assert!(
        seen["blocked"]["text"]
            .as_str()
            .unwrap()
            .contains("blocked"),
        "{seen}"
    );
    assert!(
        seen["unknown"].as_str().unwrap().contains("unknown tool"),
        "{seen}"
    );
    // The spinning guest reported progress, was cancelled, and the plugin
    // answers the next call at once.
    assert!(!seen["progress"].as_array().unwrap().is_empty(), "{seen}");
    assert!(
        seen["spin_abandoned_after_s"].as_f64().unwrap() < 10.0,
        "{seen}"
    );
    assert_eq!(seen["ping"]["isError"], false, "{seen}");
    assert!(seen["ping_s"].as_f64().unwrap() < 10.0, "{seen}");
}

/// The README's `mcpServers` entry for clawhost: its command and arguments,
/// the config path replaced by `config`.
fn readme_entry(config: &Path) -> (String, String) {
    let readme = std::fs::read_to_string(clawhost::build::repo_root().join("README.md")).unwrap();
    let block = readme
        .split_once("<!-- mcp-serve-config -->")
        .and_then(|(_, after)| after.split_once("```json\n"))
        .and_then(|(_, after)| after.split_once("```"))
        .map(|(block, _)| block)
        .expect("the README has the mcp-serve-config block");
    let entry: Value = serde_json::from_str(block).unwrap();
    let entry = &entry["mcpServers"]["clawhost"];
    let mut args: Vec<String> = serde_json::from_value(entry["args"].clone()).unwrap();
    assert_eq!(args[0], "--config");
    args[1] = config.to_string_lossy().into_owned();
    (
        entry["command"].as_str().unwrap().to_string(),
        serde_json::to_string(&args).unwrap(),
    )
}

#[test]
fn the_python_sdk_client_uses_the_agents_tools_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let config = serve_config(dir.path());
    let bin = env!("CARGO_BIN_EXE_clawhost");
    let (command, args) = readme_entry(&config);
    assert_eq!(command, "clawhost");
    let seen = drive(&["stdio", bin, &args], dir.path());
    check_scenario(&seen);
    // No way to ask the client: approvals.nonInteractive (deny) answers.
    assert_eq!(seen["exec"]["isError"], true, "{seen}");
    assert!(
        seen["exec"]["text"].as_str().unwrap().contains("approval"),
        "{seen}"
    );

    // On the previous revision's handshake the client answers the approval
    // as an elicitation.
    let seen = drive(&["legacy", bin, &args], dir.path());
    assert_eq!(seen["protocol"], "2025-11-25", "{seen}");
    check_scenario(&seen);
    assert_eq!(seen["exec"]["isError"], false, "{seen}");
    assert!(
        seen["exec"]["text"].as_str().unwrap().contains("from-exec"),
        "{seen}"
    );

    // Each connection's calls are stored in a session of their own.
    let out = Command::new(bin)
        .args(["--config", &config.to_string_lossy(), "sessions", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{listed}");
    assert!(
        listed.lines().filter(|l| l.contains("MCP client")).count() >= 2,
        "{listed}"
    );
}

#[test]
fn the_python_sdk_client_uses_the_agents_tools_over_http_with_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let config = serve_config(dir.path());
    let (server, url) = serve_http(dir.path(), &config);
    let seen = drive(&["http", &url, "s3cret"], dir.path());
    drop(server);
    assert_eq!(seen["no_token"], 401, "{seen}");
    assert_eq!(seen["wrong_token"], 401, "{seen}");
    assert_eq!(seen["foreign_origin"], 403, "{seen}");
    check_scenario(&seen);
    assert_eq!(seen["exec"]["isError"], true, "{seen}");
}

/// Run the MCP Inspector's CLI with `args` (in `dir`, its home); its exit
/// status, stdout parsed as JSON (`null` when it is not), and stderr.
fn inspect(dir: &Path, args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(npm::bin(npm::MCP_INSPECTOR, "mcp-inspector"))
        .arg("--cli")
        .args(args)
        .env("HOME", dir)
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the MCP Inspector runs");
    (
        out.status.success(),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The text of a `tools/call` result, and whether it is an error.
fn called(result: &Value) -> (String, bool) {
    (
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a text result: {result}"))
            .to_string(),
        result["isError"] == true,
    )
}

#[test]
fn the_mcp_inspector_uses_the_readme_entry_and_the_http_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let config = serve_config(dir.path());
    let (_, args) = readme_entry(&config);
    // The README's entry as a Claude Desktop-style config file, naming the
    // binary under test.
    let entry = json!({"mcpServers": {"clawhost": {
        "command": env!("CARGO_BIN_EXE_clawhost"),
        "args": serde_json::from_str::<Value>(&args).unwrap(),
    }}});
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, entry.to_string()).unwrap();
    let file = file.to_string_lossy().into_owned();
    let stdio = ["--config", &file, "--server", "clawhost"];

    // Every tool's schema passes the Inspector's portability check.
    let (ok, listed, err) = inspect(
        dir.path(),
        &[&stdio[..], &["--method", "tools/list", "--strict"]].concat(),
    );
    assert!(ok, "{err}");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| {
            panic!(
                "tools: {listed}
{err}"
            )
        })
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in ["word_count", "read_note", "read", "exec"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(err.contains("0 errors"), "{err}");

    // The Inspector exits non-zero on an `isError` result, printing it.
    let call = |args: &[&str]| {
        let (_, result, err) = inspect(dir.path(), args);
        assert!(!result.is_null(), "{err}");
        called(&result)
    };
    let tool = |name: &'static str, arg: &'static str| {
        [
            &stdio[..],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                name,
                "--tool-arg",
                arg,
            ],
        ]
        .concat()
    };
    let (text, error) = call(&tool("word_count", "text=one two three"));
    assert!(!error && text.contains("\"words\":3"), "{text}");
    // policy-guard's before_tool_call blocks it, as inside a turn.
    let (text, error) = call(&tool("read_note", "name=note.txt"));
    assert!(error && text.contains("blocked"), "{text}");
    let (text, error) = call(&tool("read", "path=note.txt"));
    assert!(!error && text.contains("a note for MCP"), "{text}");

    // Over Streamable HTTP: with the token, and refused without it.
    let (server, url) = serve_http(dir.path(), &config);
    let http = ["--server-url", &url, "--transport", "http"];
    let word_count = [
        "--method",
        "tools/call",
        "--tool-name",
        "word_count",
        "--tool-arg",
        "text=a b",
    ];
    let (text, error) = call(
        &[
            &http[..],
            &["--header", "Authorization: Bearer s3cret"],
            &word_count,
        ]
        .concat(),
    );
    assert!(!error && text.contains("\"words\":2"), "{text}");
    // Without it the server answers 401 and the Inspector asks for auth.
    let (ok, _, err) = inspect(dir.path(), &[&http[..], &word_count].concat());
    assert!(!ok && err.contains("\"auth_required\""), "{err}");
    drop(server);
}

/// `clawhost mcp serve --http` on a loopback port with the token `s3cret`,
/// run in `dir` on `config`: the process and the URL it serves.
fn serve_http(dir: &Path, config: &Path) -> (Server, String) {
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_clawhost"))
            .args(["--config", &config.to_string_lossy()])
            .args(["mcp", "serve", "--http", "127.0.0.1:0"])
            .env("CLAWHOST_MCP_TOKEN", "s3cret")
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("the server names its URL: {line}"))
        .to_string();
    (server, url)
}

/// A `clawhost mcp serve --http` process, killed when dropped (a failed
/// check must not leave it holding the test's output open).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serving_beyond_loopback_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let config = serve_config(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["--config", &config.to_string_lossy()])
        .args(["mcp", "serve", "--http", "0.0.0.0:0"])
        .env_remove("CLAWHOST_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("set a token"), "{err}");
}

#[test]
fn malformed_and_oversized_messages_do_not_stop_the_stdio_server() {
    use std::io::{BufRead, Write};
    let dir = tempfile::tempdir().unwrap();
    let config = serve_config(dir.path());
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_clawhost"))
            .args(["--config", &config.to_string_lossy(), "mcp", "serve"])
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut stdin = server.0.stdin.take().unwrap();
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"huge\",\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
        "x".repeat(50 << 20)
    );
    let writer = std::thread::spawn(move || {
        stdin.write_all(b"this is not JSON\n").unwrap();
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"no-method\"}\n")
            .unwrap();
        stdin.write_all(huge.as_bytes()).unwrap();
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        stdin.write_all(format!("{init}\n").as_bytes()).unwrap();
        stdin
    });
    let stdout = std::io::BufReader::new(server.0.stdout.take().unwrap());
    let mut answered = None;
    for line in stdout.lines() {
        let line = line.unwrap();
        assert!(line.len() < 1 << 20, "no huge echo: {} bytes", line.len());
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(
            message["id"], "huge",
            "the oversized request was dropped: {line}"
        );
        if message["id"] == "init" {
            answered = Some(message);
            break;
        }
    }
    let answered = answered.expect("the server answered after the bad input");
    assert_eq!(
        answered["result"]["serverInfo"]["name"], "clawhost",
        "{answered}"
    );
    drop(writer.join().unwrap());
}
