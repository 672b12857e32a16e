//! `clawhost plugin new` writes packages that `clawhost plugin build` builds
//! with each language's tools and the SDK the binary carries (the checkout
//! out of reach), and `run --plugin` loads them: the echo tool answers and
//! the hook blocks by config. An unchanged package is not built again; an
//! edited one is.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::path::Path;

use common::write_config;
use serde_json::json;

/// Run the binary in `dir` with the checkout out of reach: the SDKs come from
/// what the binary carries (unpacked once for all tests, see
/// [`common::clawhost`]). Rust guests share the repository's guest target
/// dir, so the standard library is built once.
fn clawhost(args: &[&str], dir: &Path) -> String {
    let target = clawhost::build::repo_root().join("target");
    let out = common::clawhost(dir)
        .args(args)
        .env("CLAWHOST_SOURCE_DIR", dir.join("no-checkout"))
        .env("CARGO_TARGET_DIR", target.join("guests"))
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

#[test]
fn new_plugins_in_every_language_build_and_load() {
    for (lang, source) in [
        ("js", "app.js"),
        ("ts", "app.ts"),
        ("rust", "src/lib.rs"),
        ("python", "app.py"),
    ] {
        let root = tempfile::tempdir().unwrap();
        let id = format!("scaffold-{lang}");
        clawhost(&["plugin", "new", &id, "--lang", lang], root.path());
        let dir = root.path().join(&id);
        if let Some(deps) = ["Cargo.toml", "package.json"]
            .iter()
            .find_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        {
            // The SDK the binary carries, by path; not the checkout's.
            assert!(deps.contains("test-sdk/clawhost/sdk/0."), "{lang}: {deps}");
        }
        let built = clawhost(&["plugin", "build", &id], root.path());
        assert!(built.contains(&format!("{id} 0.1.0: ")), "{lang}: {built}");
        assert!(!built.contains("up to date"), "{lang}: {built}");
        assert!(dir.join("plugin.wasm").is_file(), "{lang}");
        let first = std::fs::read(dir.join("plugin.wasm")).unwrap();

        // Unchanged: not built again, the component keeps its bytes.
        let again = clawhost(&["plugin", "build", &id], root.path());
        let again = if again.contains("up to date") {
            again
        } else {
            // A first build may write a lock file (Cargo.lock): then one
            // more build, after which the package is up to date.
            clawhost(&["plugin", "build", &id], root.path())
        };
        assert!(again.contains("(up to date)"), "{lang}: {again}");
        assert!(!again.contains("building"), "{lang}: {again}");
        assert_eq!(std::fs::read(dir.join("plugin.wasm")).unwrap(), first);

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
                    "limits": {"callTimeoutMs": 20000},
                    "entries": {id.clone(): {"config": {"blockWords": ["secret"]}}}
                },
                "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
                "agents": {"defaults": {"model": "scripted/test"}}
            }),
        );
        let config = config.to_str().unwrap();
        let run =
            |prompt: &str| clawhost(&["run", "-c", config, "--plugin", &id, prompt], root.path());
        // The tool answers; the hook blocks by config.
        let out = run("hello there");
        assert!(
            out.contains(&format!("{tool} returned: \"hello there\"")),
            "{lang}: {out}"
        );
        assert!(out.contains("(up to date)"), "{lang}: {out}");

        // An edit is built and served.
        let path = dir.join(source);
        let text = std::fs::read_to_string(&path).unwrap();
        let edited = text.replace("parameters mention", "parameters name");
        assert_ne!(text, edited, "{lang}");
        std::fs::write(&path, edited).unwrap();
        let out = run("a secret");
        assert!(out.contains(&format!("building {id}")), "{lang}: {out}");
        assert!(out.contains("parameters name `secret`"), "{lang}: {out}");
    }
}
