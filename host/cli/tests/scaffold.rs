//! `clawhost plugin new` writes packages that build outside this repository
//! with each language's ordinary tools, and load: the echo tool answers and
//! the hook blocks by config.

mod common;

use std::path::Path;
use std::process::Command;

use common::write_config;
use serde_json::json;

fn clawhost(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{args:?}: {all}");
    all
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Build a scaffolded package with its language's SDK command.
fn build(lang: &str, dir: &Path) {
    let repo = clawhost::build::repo_root();
    match lang {
        "rust" => {
            // The ordinary route is `cargo build --target wasm32-wasip2` with a
            // rustup target; here, Debian's rustc-web with the shared guest
            // target dir (its std is already built by plugins/build.sh).
            let target = repo.join("target").join("guests");
            run(Command::new("/usr/bin/cargo")
                .args(["build", "--release", "--target", "wasm32-wasip2"])
                .args(["-Zbuild-std=std,panic_abort", "--target-dir"])
                .arg(&target)
                .args([
                    "--config",
                    r#"target.wasm32-wasip2.rustflags=["-L","native=/usr/lib/wasm32-wasi"]"#,
                ])
                .current_dir(dir)
                .env_remove("CARGO_TARGET_DIR")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .env_remove("RUSTFLAGS")
                .env_remove("RUSTUP_TOOLCHAIN")
                .env("RUSTC", "/usr/bin/rustc")
                .env("RUSTC_BOOTSTRAP", "1"));
            std::fs::copy(
                target.join("wasm32-wasip2/release/scaffold_rust.wasm"),
                dir.join("plugin.wasm"),
            )
            .unwrap();
        }
        "python" => run(Command::new("python3")
            .arg(repo.join("sdk/python/clawhost_sdk/build.py"))
            .args(["build", "."])
            .current_dir(dir)),
        "js" | "ts" => run(Command::new("node")
            .arg(repo.join("sdk/js/build.mjs"))
            .args(["build", ".", "--module"])
            .arg(if lang == "ts" { "app.ts" } else { "app.js" })
            .current_dir(dir)),
        _ => unreachable!(),
    }
}

#[test]
fn new_plugins_in_every_language_build_and_load() {
    common::plugins(); // the guest toolchain, std and the SDKs' dependencies
    for lang in ["js", "ts", "rust", "python"] {
        let root = tempfile::tempdir().unwrap();
        let id = format!("scaffold-{lang}");
        clawhost(&["plugin", "new", &id, "--lang", lang], root.path());
        let dir = root.path().join(&id);
        build(lang, &dir);
        let tool = format!("{}_echo", id.replace('-', "_"));
        let script = root.path().join("script.json");
        std::fs::write(
            &script,
            json!([
                {"toolCalls": [{"name": tool, "arguments": {"text": "{{user}}"}}]},
                {"answer": "got {{results}}"}
            ])
            .to_string(),
        )
        .unwrap();
        let config = write_config(
            root.path(),
            json!({
                "plugins": {
                    "paths": [dir],
                    "limits": {"callTimeoutMs": 20000},
                    "entries": {id.clone(): {"config": {"blockWords": ["secret"]}}}
                },
                "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
                "agents": {"defaults": {"model": "scripted/test"}}
            }),
        );
        let config = config.to_str().unwrap();
        let status = clawhost(&["plugins", "-c", config], root.path());
        assert!(
            status.contains(&format!("✓ {id} 0.1.0")) && status.contains(&tool),
            "{lang}: {status}"
        );
        assert!(status.contains("before_tool_call@10"), "{lang}: {status}");
        // The tool answers; the hook blocks by config.
        let out = clawhost(&["run", "-c", config, "hello there"], root.path());
        assert!(
            out.contains(&format!("{tool} returned: \"hello there\"")),
            "{lang}: {out}"
        );
        let out = clawhost(&["run", "-c", config, "a secret"], root.path());
        assert!(out.contains("parameters mention `secret`"), "{lang}: {out}");
    }
}
