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
        "observed session_start run-",
        "observed agent_end success=true",
        "observed session_end run-",
        "observed llm_input",
    ] {
        assert!(all.contains(line), "missing `{line}` in:\n{all}");
    }
}
