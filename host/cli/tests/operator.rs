//! The operator's plugin commands from the binary: install (directory and
//! archive), enable, disable, doctor, uninstall; `--plugin` dev packages;
//! `echo` offered only as a fixture; the binary away from its checkout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{clawhost, outcome, plugins};
use serde_json::json;

/// A config with the shared test cache and a scripted model playing `script`.
fn operator_config(dir: &Path, script: serde_json::Value) -> std::path::PathBuf {
    let config = common::scripted_config(dir, script);
    // The operator's own file: a comment the commands must keep.
    let text = std::fs::read_to_string(&config).unwrap();
    let path = dir.join("clawhost.json5");
    std::fs::write(&path, format!("// the operator's notes\n{text}\n")).unwrap();
    std::fs::remove_file(config).unwrap();
    path
}

fn greet_script() -> serde_json::Value {
    json!([
        {"toolCalls": [{"name": "greet", "arguments": {"name": "{{user}}"}}]},
        {"answer": "said {{results}}"}
    ])
}

#[test]
fn install_enable_disable_doctor_and_uninstall_edit_the_config_in_place() {
    let built = plugins();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let config = operator_config(dir, greet_script());
    let run = |args: &[&str]| outcome(clawhost(dir).args(args));

    // A package that was never built: the error says how to build it.
    let unbuilt = dir.join("unbuilt");
    std::fs::create_dir(&unbuilt).unwrap();
    std::fs::copy(
        built.join("hello-tool/openclaw.plugin.json"),
        unbuilt.join("openclaw.plugin.json"),
    )
    .unwrap();
    let (ok, _, err) = run(&["plugins", "install", unbuilt.to_str().unwrap()]);
    assert!(
        !ok && err.contains("build it first: clawhost plugin build") && err.contains("unbuilt"),
        "{err}"
    );
    assert!(!dir.join("plugins/hello-tool").exists());

    // A directory package: verified, copied beside the config, pinned.
    let (ok, out, err) = run(&[
        "plugins",
        "install",
        built.join("hello-tool").to_str().unwrap(),
    ]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("installed hello-tool 0.1.0"), "{out}");
    assert!(dir.join("plugins/hello-tool/plugin.wasm").is_file());
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("// the operator's notes"), "{text}");
    assert!(
        text.contains("\"sha256\"") && text.contains("./plugins"),
        "{text}"
    );
    let (ok, out, err) = run(&["run", "ann"]);
    assert!(
        ok && out.contains("greet returned: \"hello, ann\""),
        "{out}{err}"
    );
    // Installing it again needs --force.
    let (ok, _, err) = run(&[
        "plugins",
        "install",
        built.join("hello-tool").to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("already installed"), "{err}");

    // An archive, with the grant its manifest asks for.
    let archive = dir.join("text-tools.tar.gz");
    let status = Command::new("tar")
        .arg("czf")
        .arg(&archive)
        .arg("-C")
        .arg(&built)
        .arg("text-tools")
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(dir.join("notes")).unwrap();
    let (ok, out, err) = run(&[
        "plugins",
        "install",
        archive.to_str().unwrap(),
        "--fs",
        "/notes=./notes",
        "--json",
    ]);
    assert!(ok, "{out}{err}");
    let installed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(installed["id"], "text-tools");
    assert_eq!(
        installed["grants"]["filesystem"][0]["guestPath"], "/notes",
        "{out}"
    );
    // A grant the manifest does not ask for is refused before anything is copied.
    let (ok, _, err) = run(&[
        "plugins",
        "install",
        built.join("policy-guard").to_str().unwrap(),
        "--fs",
        "/etc=/etc",
    ]);
    assert!(!ok && err.contains("does not ask for /etc"), "{err}");
    assert!(!dir.join("plugins/policy-guard").exists());

    let (ok, out, err) = run(&["plugins", "doctor"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("✓ hello-tool 0.1.0 loads") && out.contains("✓ text-tools"),
        "{out}"
    );
    let (ok, out, err) = run(&["plugins", "doctor", "--json"]);
    assert!(ok, "{out}{err}");
    let found: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(found["problems"], 0, "{out}");

    // Disabled: left out by choice (the listing still succeeds), and back.
    let (ok, out, err) = run(&["plugins", "disable", "hello-tool", "--json"]);
    assert!(ok, "{err}");
    let said: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(said["enabled"], false, "{out}");
    let (ok, out, err) = run(&["plugins", "list", "--json"]);
    assert!(ok, "{out}{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["loaded"].as_array().unwrap().len(), 1, "{out}");
    let (ok, out, _) = run(&["run", "bob"]);
    assert!(ok && out.contains("unknown tool `greet`"), "{out}");
    let (ok, _, err) = run(&["plugins", "enable", "hello-tool"]);
    assert!(ok, "{err}");
    let (ok, _, err) = run(&["plugins", "enable", "nobody"]);
    assert!(!ok && err.contains("no package"), "{err}");

    // A component changed after install no longer matches its pin: doctor fails.
    let wasm = dir.join("plugins/hello-tool/plugin.wasm");
    let mut bytes = std::fs::read(&wasm).unwrap();
    bytes.push(0);
    std::fs::write(&wasm, bytes).unwrap();
    let (ok, out, _) = run(&["plugins", "doctor"]);
    assert!(!ok && out.contains("✗ hello-tool"), "{out}");

    // Uninstall removes the package and its entry; the comment stays.
    let (ok, _, err) = run(&["plugins", "uninstall", "hello-tool"]);
    assert!(ok, "{err}");
    assert!(!dir.join("plugins/hello-tool").exists());
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        !text.contains("hello-tool") && text.contains("// the operator's notes"),
        "{text}"
    );
    let (ok, _, err) = run(&["plugins", "uninstall", "hello-tool"]);
    assert!(!ok && err.contains("not installed"), "{err}");
}

#[test]
fn echo_is_a_fixture_a_model_is_not_offered_by_default() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    operator_config(
        dir,
        json!([
            {"toolCalls": [{"name": "echo", "arguments": {"text": "hi"}}]},
            {"answer": "done"}
        ]),
    );
    let (ok, out, err) = outcome(clawhost(dir).args(["run", "x"]));
    assert!(ok, "{err}");
    assert!(out.contains("unknown tool `echo`"), "{out}");
    let (ok, out, err) =
        outcome(clawhost(dir).args(["config", "set", "tools.testFixtures", "true"]));
    assert!(ok, "{out}{err}");
    let (ok, out, _) = outcome(clawhost(dir).args(["run", "x"]));
    assert!(ok && out.contains("echo (call_1_1) ✓"), "{out}");
}

/// Read `child`'s stdout until a line contains `want`, or panic after `limit`.
fn wait_for(lines: &std::sync::mpsc::Receiver<String>, want: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    let mut seen = String::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(want) {
                    return seen;
                }
            }
            Err(_) => break,
        }
    }
    panic!("no `{want}` within {limit:?}; saw:\n{seen}");
}

#[test]
fn a_dev_plugin_is_built_loaded_and_rebuilt_on_change_in_chat() {
    plugins(); // the JS SDK's dependencies
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let (ok, _, err) = outcome(clawhost(dir).args(["plugin", "new", "dev-js", "--lang", "js"]));
    assert!(ok, "{err}");
    operator_config(
        dir,
        json!([
            {"toolCalls": [{"name": "dev_js_echo", "arguments": {"text": "{{user}}"}}]},
            {"answer": "got {{results}}"}
        ]),
    );
    // `run --plugin`: built, then loaded.
    let (ok, out, err) = outcome(clawhost(dir).args(["run", "--plugin", "dev-js", "quiet words"]));
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("dev_js_echo returned: \"quiet words\""),
        "{out}"
    );
    assert!(dir.join("dev-js/plugin.wasm").is_file());
    // Installed under the same id: the --plugin copy stands in for the
    // installed one, and that is what is said (not a refusal).
    let (ok, _, err) = outcome(clawhost(dir).args(["plugins", "install", "dev-js"]));
    assert!(ok, "{err}");
    let (ok, out, err) = outcome(clawhost(dir).args(["run", "--plugin", "dev-js", "quiet words"]));
    assert!(ok, "{out}{err}");
    assert!(
        err.contains("gives way to the --plugin copy at") && !err.contains('✗'),
        "{err}"
    );
    assert!(out.contains("dev_js_echo returned"), "{out}");
    let (ok, _, err) = outcome(clawhost(dir).args(["plugins", "uninstall", "dev-js"]));
    assert!(ok, "{err}");

    // `chat --plugin`: an edit of the source rebuilds and reloads.
    let mut child = clawhost(dir)
        .args(["chat", "--plugin", "dev-js"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "first words").unwrap();
    wait_for(&rx, "returned: \"first words\"", Duration::from_secs(60));
    let app = dir.join("dev-js/app.js");
    let source = std::fs::read_to_string(&app).unwrap();
    let changed = source.replace(
        "run: ({ text }) => text,",
        "run: ({ text }) => text.toUpperCase(),",
    );
    assert_ne!(source, changed, "the scaffold's echo tool changed shape");
    std::fs::write(&app, changed).unwrap();
    wait_for(
        &rx,
        "plugins rebuilt and reloaded",
        Duration::from_secs(120),
    );
    writeln!(stdin, "second words").unwrap();
    wait_for(&rx, "returned: \"SECOND WORDS\"", Duration::from_secs(60));
    // A broken edit is reported; the last good build keeps serving.
    std::fs::write(&app, "this is not javascript (").unwrap();
    wait_for(&rx, "rebuild failed", Duration::from_secs(120));
    writeln!(stdin, "third words").unwrap();
    wait_for(&rx, "returned: \"THIRD WORDS\"", Duration::from_secs(60));
    // So does an invalid edit of the config.
    let config = dir.join("clawhost.json5");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("\"agents\"", "\"agentz\"")).unwrap();
    let said = wait_for(&rx, "config reload failed", Duration::from_secs(60));
    assert!(said.contains("agentz"), "{said}");
    writeln!(stdin, "fourth words").unwrap();
    wait_for(&rx, "returned: \"FOURTH WORDS\"", Duration::from_secs(60));
    writeln!(stdin, "/quit").unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn an_installed_binary_runs_away_from_its_checkout() {
    let built = plugins();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_clawhost"), bin.join("clawhost")).unwrap();
    let away = |args: &[&str]| {
        let mut cmd = Command::new(bin.join("clawhost"));
        cmd.args(args)
            .current_dir(dir)
            .env("HOME", dir)
            .env("XDG_CONFIG_HOME", dir.join("xdg"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .env("CLAWHOST_SOURCE_DIR", dir.join("no-checkout"))
            .env_remove("CLAWHOST_PLUGINS_DIR")
            .env_remove("CLAWHOST_CONFIG")
            .env("NO_COLOR", "1");
        outcome(&mut cmd)
    };
    // Without the example packages, the demo says what it needs.
    let (ok, _, err) = away(&["demo"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("--plugins-dir") && err.contains("plugins/build.sh"),
        "{err}"
    );
    // With them, it runs from the files built into the binary.
    let (ok, out, err) = away(&["demo", "--plugins-dir", built.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("turn finished"), "{out}");
    // A new package names the SDK the binary carries, unpacked by path
    // (never a registry version that does not exist).
    let (ok, _, err) = away(&["plugin", "new", "far-away", "--lang", "rust"]);
    assert!(ok, "{err}");
    let cargo = std::fs::read_to_string(dir.join("far-away/Cargo.toml")).unwrap();
    let sdk = cargo
        .lines()
        .find_map(|l| l.strip_prefix("clawhost-sdk = { path = \""))
        .and_then(|l| l.strip_suffix("\" }"))
        .unwrap_or_else(|| panic!("{cargo}"));
    assert!(
        sdk.starts_with(
            &dir.join(".local/share/clawhost/sdk/0.")
                .display()
                .to_string()
        ),
        "{sdk}"
    );
    let sdk = std::path::Path::new(sdk);
    assert!(sdk.join("Cargo.toml").is_file() && sdk.join("wit/worlds.wit").is_file());
}
