//! `clawhost plugin new` writes packages that `clawhost plugin build` builds
//! outside this repository with each language's tools, and they load: the
//! echo tool answers and the hook blocks by config.

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

/// Build a scaffolded package with `clawhost plugin build`, which picks the
/// language's tools. Rust guests share the repository's guest target dir,
/// whose std plugins/build.sh has already built.
fn build(dir: &Path) -> String {
    let target = clawhost::build::repo_root().join("target").join("guests");
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(["plugin", "build"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{}: {all}", dir.display());
    all
}

#[test]
fn new_plugins_in_every_language_build_and_load() {
    common::plugins(); // the guest toolchain, std and the SDKs' dependencies
    for lang in ["js", "ts", "rust", "python"] {
        let root = tempfile::tempdir().unwrap();
        let id = format!("scaffold-{lang}");
        clawhost(&["plugin", "new", &id, "--lang", lang], root.path());
        let dir = root.path().join(&id);
        let built = build(&dir);
        assert!(built.contains(&format!("{id} 0.1.0: ")), "{lang}: {built}");
        assert!(dir.join("plugin.wasm").is_file(), "{lang}");
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
