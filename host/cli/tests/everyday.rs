//! The everyday command line: where the config is found, flags anywhere,
//! JSON5 and `${VAR}` secrets, log filters, and output into a closed pipe.

use std::process::{Command, Stdio};

use serde_json::json;

fn clawhost(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clawhost"));
    cmd.current_dir(dir)
        .env_remove("CLAWHOST_CONFIG")
        .env_remove("CLAWHOST_LOG")
        .env_remove("RUST_LOG")
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("NO_COLOR", "1");
    cmd
}

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
    // Nothing anywhere: the error says where it looked.
    let out = clawhost(root.path()).arg("models").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no config file") && err.contains("clawhost.json5") && err.contains("-c"),
        "{err}"
    );
    // ./clawhost.json5 (JSON5, with a secret from the environment).
    std::fs::write(root.path().join("clawhost.json5"), JSON5_CONFIG).unwrap();
    let out = clawhost(root.path())
        .arg("models")
        .env("FAKE_KEY", "sk-1")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{all}");
    assert!(all.contains("remote/m"), "{all}");
    // An unset secret is named with its key, not sent as `${FAKE_KEY}`.
    let out = clawhost(root.path()).arg("models").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("models.providers.remote.apiKey") && err.contains("`FAKE_KEY` is not set"),
        "{err}"
    );
    // $CLAWHOST_CONFIG, and -c after the subcommand's own arguments.
    let elsewhere = root.path().join("elsewhere.json");
    std::fs::write(
        &elsewhere,
        json!({"agents": {"defaults": {"model": "scripted/other"}}}).to_string(),
    )
    .unwrap();
    let out = clawhost(root.path())
        .args(["models"])
        .env("CLAWHOST_CONFIG", &elsewhere)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = clawhost(root.path())
        .args(["sessions", "list", "-c"])
        .arg(&elsewhere)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The user config dir.
    std::fs::remove_file(root.path().join("clawhost.json5")).unwrap();
    std::fs::create_dir_all(root.path().join("xdg/clawhost")).unwrap();
    std::fs::write(
        root.path().join("xdg/clawhost/clawhost.json5"),
        JSON5_CONFIG,
    )
    .unwrap();
    let out = clawhost(root.path())
        .arg("models")
        .env("FAKE_KEY", "sk-1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rust_log_is_honoured_and_a_closed_pipe_ends_quietly() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("clawhost.json5"), JSON5_CONFIG).unwrap();
    let out = clawhost(root.path())
        .arg("models")
        .env("FAKE_KEY", "sk-1")
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // (The default filter shows warnings only.)
    assert!(
        err.contains("INFO clawhost_llm"),
        "RUST_LOG=trace logs: {err}"
    );
    // The reader of stdout is gone before anything is printed.
    let mut child = clawhost(root.path())
        .arg("models")
        .env("FAKE_KEY", "sk-1")
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
    std::fs::write(root.path().join("clawhost.json5"), JSON5_CONFIG).unwrap();
    let out = clawhost(root.path())
        .args(["config", "validate"])
        .env("FAKE_KEY", "sk-1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("clawhost.json5: valid"), "{stdout}");
    // `get` shows the file's own text: the secret stays a reference.
    let out = clawhost(root.path())
        .args(["config", "get", "models.providers.remote.apiKey"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "\"${FAKE_KEY}\""
    );
    let out = clawhost(root.path())
        .args(["config", "get", "models.providers.scripted.models[0].id"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "\"demo\"");
    let out = clawhost(root.path())
        .args(["config", "get", "plugins.limits"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not set `plugins.limits`"));
    // An invalid file: validate fails naming the key.
    std::fs::write(root.path().join("clawhost.json5"), "{plugins: {alow: []}}").unwrap();
    let out = clawhost(root.path())
        .args(["config", "validate"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("plugins.alow"));
}
