//! The everyday command line: where the config is found, flags anywhere,
//! JSON5 and `${VAR}` secrets, log filters, and output into a closed pipe.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::process::Stdio;

use common::{clawhost, outcome};
use serde_json::json;

/// A JSON5 config with a comment, a trailing comma and an API key from
/// `${FAKE_KEY}`, for a scripted model.
const JSON5_CONFIG: &str = r#"{
  // a comment
  models: { providers: {
    scripted: { api: "scripted", models: [{ id: "demo" }], },
    remote: { api: "openai-completions", baseUrl: "https://api.example.com/v1", apiKey: "${FAKE_KEY}", models: [{ id: "m" }] },
  } },
  agents: { defaults: { model: "scripted/demo" } },
}"#;

#[test]
fn the_config_is_found_without_c_and_flags_go_anywhere() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    // Nothing anywhere: the error says where it looked.
    let (ok, _, err) = outcome(clawhost(dir).arg("models"));
    assert!(!ok);
    assert!(
        err.contains("no config file") && err.contains("clawhost.json5") && err.contains("-c"),
        "{err}"
    );
    // ./clawhost.json5 (JSON5, with a secret from the environment).
    std::fs::write(dir.join("clawhost.json5"), JSON5_CONFIG).unwrap();
    let (ok, out, err) = outcome(clawhost(dir).arg("models").env("FAKE_KEY", "sk-1"));
    assert!(ok, "{err}");
    assert!(out.contains("remote/m"), "{out}");
    // An unset secret is named with its key, not sent as `${FAKE_KEY}`.
    let (ok, _, err) = outcome(clawhost(dir).arg("models"));
    assert!(!ok);
    assert!(
        err.contains("models.providers.remote.apiKey") && err.contains("`FAKE_KEY` is not set"),
        "{err}"
    );
    // $CLAWHOST_CONFIG, and -c after the subcommand's own arguments.
    let elsewhere = dir.join("elsewhere.json");
    let other = json!({"agents": {"defaults": {"model": "scripted/other"}}});
    std::fs::write(&elsewhere, other.to_string()).unwrap();
    let (ok, _, err) = outcome(
        clawhost(dir)
            .arg("models")
            .env("CLAWHOST_CONFIG", &elsewhere),
    );
    assert!(ok, "{err}");
    let (ok, _, err) = outcome(
        clawhost(dir)
            .args(["sessions", "list", "-c"])
            .arg(&elsewhere),
    );
    assert!(ok, "{err}");
    // The user config dir.
    std::fs::remove_file(dir.join("clawhost.json5")).unwrap();
    std::fs::create_dir_all(dir.join("xdg/clawhost")).unwrap();
    std::fs::write(dir.join("xdg/clawhost/clawhost.json5"), JSON5_CONFIG).unwrap();
    let (ok, _, err) = outcome(clawhost(dir).arg("models").env("FAKE_KEY", "sk-1"));
    assert!(ok, "{err}");
}

#[test]
fn rust_log_is_honoured_and_a_closed_pipe_ends_quietly() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    std::fs::write(dir.join("clawhost.json5"), JSON5_CONFIG).unwrap();
    let models = || {
        let mut cmd = clawhost(dir);
        cmd.arg("models").env("FAKE_KEY", "sk-1");
        cmd
    };
    let (ok, _, err) = outcome(models().env("RUST_LOG", "trace"));
    assert!(ok, "{err}");
    // (The default filter shows warnings only.)
    assert!(
        err.contains("INFO clawhost_llm"),
        "RUST_LOG=trace logs: {err}"
    );
    // The reader of stdout is gone before anything is printed.
    let mut child = models()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn config_validate_and_get_read_the_file_found() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    std::fs::write(dir.join("clawhost.json5"), JSON5_CONFIG).unwrap();
    let config = |args: &[&str]| {
        outcome(
            clawhost(dir)
                .arg("config")
                .args(args)
                .env("FAKE_KEY", "sk-1"),
        )
    };
    let (ok, out, err) = config(&["validate"]);
    assert!(ok, "{err}");
    assert!(out.contains("clawhost.json5: valid"), "{out}");
    // `get` shows the file's own text: the secret stays a reference.
    let (ok, out, err) = config(&["get", "models.providers.remote.apiKey"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "\"${FAKE_KEY}\"");
    let (_, out, _) = config(&["get", "models.providers.scripted.models[0].id"]);
    assert_eq!(out.trim(), "\"demo\"");
    let (ok, _, err) = config(&["get", "plugins.limits"]);
    assert!(
        !ok && err.contains("does not set `plugins.limits`"),
        "{err}"
    );
    // `set` keeps the comment and trailing commas, reads JSON5 values and
    // takes anything else as a string.
    let (ok, _, err) = config(&["set", "plugins.limits.memoryMb", "48"]);
    assert!(ok, "{err}");
    let (ok, _, err) = config(&["set", "agents.defaults.model", "remote/m"]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(dir.join("clawhost.json5")).unwrap();
    assert!(
        text.contains("// a comment") && text.contains("models: [{ id: \"demo\" }], }"),
        "{text}"
    );
    let (_, out, _) = config(&["get", "plugins.limits.memoryMb"]);
    assert_eq!(out.trim(), "48");
    let (_, out, _) = config(&["get", "agents.defaults.model"]);
    assert_eq!(out.trim(), "\"remote/m\"");
    // An edit that would make the file invalid is refused, said once, and
    // the file is left as it was.
    let (ok, _, err) = config(&["set", "plugins.limits.memoryMb", "lots"]);
    assert!(!ok && err.contains("plugins.limits.memoryMb"), "{err}");
    assert_eq!(err.matches("expected u64").count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("clawhost.json5")).unwrap(),
        text
    );
    let (ok, _, err) = config(&["unset", "plugins.limits.memoryMb"]);
    assert!(ok, "{err}");
    let (ok, _, _) = config(&["get", "plugins.limits.memoryMb"]);
    assert!(!ok);
    // The schema is JSON Schema of the file.
    let (ok, out, err) = config(&["schema"]);
    assert!(ok, "{err}");
    let schema: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(schema["properties"]["plugins"].is_object(), "{out}");
    assert_eq!(schema["additionalProperties"], json!(false));
    // With no config anywhere, `set` starts one in the user's config dir.
    let fresh = tempfile::tempdir().unwrap();
    let (ok, _, err) = outcome(clawhost(fresh.path()).args([
        "config",
        "set",
        "agents.defaults.model",
        "openai/gpt-4.1",
    ]));
    assert!(ok, "{err}");
    let made = fresh.path().join("xdg/clawhost/clawhost.json5");
    assert!(std::fs::read_to_string(made)
        .unwrap()
        .contains("openai/gpt-4.1"));
    // An invalid file: validate fails naming the key, once.
    std::fs::write(dir.join("clawhost.json5"), "{plugins: {alow: []}}").unwrap();
    let (ok, _, err) = config(&["validate"]);
    assert!(!ok && err.contains("plugins.alow"), "{err}");
    assert_eq!(err.matches("plugins.alow").count(), 1, "{err}");
}

#[test]
fn a_message_from_stdin_and_shell_completions() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    std::fs::write(
        dir.join("script.json"),
        json!([{"toolCalls": [{"name": "echo", "arguments": {"text": "{{user}}"}}]},
               {"answer": "heard: {{results}}"}])
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("clawhost.json"),
        json!({"models": {"providers": {"s": {"api": "scripted", "script": "script.json", "models": [{"id": "m"}]}}},
               "agents": {"defaults": {"model": "s/m"}},
               "tools": {"testFixtures": true}})
        .to_string(),
    )
    .unwrap();
    // `run -`: the message is read from standard input.
    let mut child = clawhost(dir)
        .args(["run", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"a line from a pipe\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("heard: ") && stdout.contains("a line from a pipe"),
        "{stdout}"
    );
    // The session it stored, listed with its date, and as JSON.
    let (ok, listed, err) = outcome(clawhost(dir).args(["sessions", "list"]));
    assert!(
        ok && listed.contains(" GMT  ") && listed.contains("a line from a pipe"),
        "{listed}{err}"
    );
    let (ok, listed, err) = outcome(clawhost(dir).args(["sessions", "list", "--json"]));
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert!(doc["data"][0]["updatedAtMs"].as_u64().unwrap() > 0, "{doc}");
    // Completions need no config.
    let empty = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let (ok, out, err) = outcome(clawhost(empty.path()).args(["completions", shell]));
        assert!(ok, "{shell}: {err}");
        assert!(
            out.contains("gateway") && out.contains("plugins"),
            "{shell}: {out}"
        );
    }
}

/// A config whose agent's provider takes its key from $DOCTOR_TEST_KEY.
fn write_doctor_config(dir: &std::path::Path) {
    std::fs::write(
        dir.join("clawhost.json"),
        json!({"models": {"providers": {"remote": {"api": "openai-completions",
                 "baseUrl": "https://api.example.com/v1", "apiKeyEnv": "DOCTOR_TEST_KEY",
                 "models": [{"id": "m"}]}}},
               "agents": {"defaults": {"model": "remote/m"}}})
        .to_string(),
    )
    .unwrap();
}

#[test]
fn doctor_names_a_missing_provider_key_as_a_problem() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    write_doctor_config(dir);
    let (ok, out, _) = outcome(clawhost(dir).arg("doctor").env_remove("DOCTOR_TEST_KEY"));
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "✗ agent main: model remote/m; provider `remote`: missing: $DOCTOR_TEST_KEY is not set"
        ),
        "{out}"
    );
    let (ok, out, err) = outcome(
        clawhost(dir)
            .args(["doctor", "--json"])
            .env("DOCTOR_TEST_KEY", "k"),
    );
    assert!(ok, "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["problems"], 0, "{doc}");
    // `models --json`: the same facts as a document, no secret in it.
    let (ok, out, err) = outcome(
        clawhost(dir)
            .args(["models", "--json"])
            .env("DOCTOR_TEST_KEY", "sekrit"),
    );
    assert!(ok, "{err}");
    let models: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(models["agents"][0]["model"], "remote/m", "{models}");
    assert_eq!(models["auth"][0]["ready"], true, "{models}");
    assert!(
        models["catalog"].to_string().contains("remote/m") && !out.contains("sekrit"),
        "{out}"
    );
    assert!(
        doc["findings"]
            .to_string()
            .contains("api key from $DOCTOR_TEST_KEY"),
        "{doc}"
    );
}

/// One finding of `doctor --json` by its code.
fn finding<'a>(doc: &'a serde_json::Value, code: &str) -> &'a serde_json::Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {doc}"))
}

#[test]
fn doctor_findings_carry_a_level_a_code_a_message_and_a_fix() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    write_doctor_config(dir);
    // Sessions open to other users; no guest toolchain on PATH.
    let sessions = dir.join(".clawhost/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
    let empty = dir.join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let (ok, out, _) = outcome(
        clawhost(dir)
            .args(["doctor", "--json"])
            .env_remove("DOCTOR_TEST_KEY")
            .env("PATH", &empty),
    );
    assert!(!ok, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    for f in doc["findings"].as_array().unwrap() {
        assert!(
            ["ok", "warning", "error"].contains(&f["level"].as_str().unwrap())
                && f["code"].as_str().is_some_and(|c| c.contains('.'))
                && f["message"].is_string(),
            "{f}"
        );
    }
    assert_eq!(doc["problems"], 1, "{doc}");
    let key = finding(&doc, "model.no_key");
    assert_eq!(key["level"], "error");
    assert!(
        key["fix"]
            .as_str()
            .unwrap()
            .contains("models.providers.remote.apiKey"),
        "{key}"
    );
    let open = finding(&doc, "sessions.dir");
    assert_eq!(open["level"], "warning", "{open}");
    assert!(
        open["message"].as_str().unwrap().contains("mode 755")
            && open["fix"] == format!("chmod 700 {}", sessions.display()),
        "{open}"
    );
    assert_eq!(finding(&doc, "config.valid")["level"], "ok");
    let sdk = finding(&doc, "sdk.ready");
    assert!(
        sdk["message"].as_str().unwrap().contains("test-sdk"),
        "{sdk}"
    );
    for code in ["toolchain.python", "toolchain.js"] {
        let tool = finding(&doc, code);
        assert_eq!(tool["level"], "warning", "{tool}");
        // The install command for this platform (Debian here).
        assert!(
            tool["fix"].as_str().unwrap().contains("sudo apt install"),
            "{tool}"
        );
    }
    // In text, each fix follows its finding.
    let (_, out, _) = outcome(
        clawhost(dir)
            .arg("doctor")
            .env_remove("DOCTOR_TEST_KEY")
            .env("PATH", &empty),
    );
    assert!(
        out.contains(&format!(
            "! sessions {} is open to other users (mode 755)\n    fix: chmod 700 {}",
            sessions.display(),
            sessions.display()
        )),
        "{out}"
    );
}

#[test]
fn the_user_configs_sessions_live_in_the_state_dir_and_old_ones_move_there() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let user = dir.join("xdg/clawhost");
    std::fs::create_dir_all(&user).unwrap();
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        json!([{"answer": "hi"}, {"answer": "again"}]).to_string(),
    )
    .unwrap();
    std::fs::write(
        user.join("clawhost.json5"),
        json!({"models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
               "agents": {"defaults": {"model": "scripted/test"}}})
        .to_string(),
    )
    .unwrap();
    let state = dir.join("state");
    let run = |args: &[&str]| outcome(clawhost(dir).args(args).env("XDG_STATE_HOME", &state));
    let (ok, out, err) = run(&["run", "hello"]);
    assert!(ok, "{out}{err}");
    let sessions = state.join("clawhost/sessions");
    assert!(sessions.join("main").is_dir(), "{out}{err}");
    assert!(!user.join(".clawhost").exists());
    // Where an older version kept them: beside the config. They move.
    let old = user.join(".clawhost/sessions");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::rename(&sessions, &old).unwrap();
    let (ok, out, err) = run(&["sessions", "list", "--json"]);
    assert!(ok, "{err}");
    assert!(err.contains("sessions moved from"), "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1, "{out}");
    assert!(sessions.join("main").is_dir() && !old.exists());
    // A run moves them too, and continues there.
    std::fs::rename(&sessions, &old).unwrap();
    let (ok, out, err) = run(&["run", "again"]);
    assert!(ok, "{out}{err}");
    assert!(sessions.join("main").is_dir() && !old.exists());
    let (_, out, _) = run(&["sessions", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 2, "{out}");
}

#[test]
fn doctor_names_a_granted_process_that_is_not_there() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let grant = |command: &str| {
        json!({"models": {"providers": {"remote": {"api": "openai-completions",
                 "baseUrl": "https://api.example.com/v1", "apiKey": "k", "models": [{"id": "m"}]}}},
               "agents": {"defaults": {"model": "remote/m"}},
               "plugins": {"entries": {"codex": {"grants": {"harness": true,
                 "processes": {"app-server": {"command": command, "args": ["app-server"]}}}}}}})
        .to_string()
    };
    std::fs::write(dir.join("clawhost.json"), grant("no-such-codex-here")).unwrap();
    let (ok, out, _) = outcome(clawhost(dir).args(["doctor", "--json"]));
    assert!(!ok, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let missing = finding(&doc, "process.missing");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("plugin codex: process `app-server`: `no-such-codex-here`"),
        "{missing}"
    );
    // `sh` is on every PATH this runs on.
    std::fs::write(dir.join("clawhost.json"), grant("sh")).unwrap();
    let (_, out, _) = outcome(clawhost(dir).args(["doctor", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(finding(&doc, "process.ready")["level"], "ok", "{doc}");
}
