//! `clawhost plugins`: list (text and JSON), inspect, and a non-zero exit
//! when a wanted plugin is refused or the config holds a silent mistake.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::process::Command;

use common::{plugins, write_config};
use serde_json::{json, Value};

fn clawhost(args: &[&str], config: &std::path::Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args(args)
        .arg("-c")
        .arg(config)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_and_inspect_show_what_loaded_and_exit_zero_when_all_is_well() {
    let root = tempfile::tempdir().unwrap();
    let config = write_config(
        root.path(),
        json!({"plugins": {"paths": [plugins()], "allow": ["text-tools", "policy-guard"]}}),
    );
    let (ok, stdout, stderr) = clawhost(&["plugins", "list", "--json"], &config);
    assert!(ok, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let mut loaded: Vec<&str> = doc["loaded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    loaded.sort();
    assert_eq!(loaded, ["policy-guard", "text-tools"]);
    // The packages the allowlist leaves out are listed, and are no failure.
    assert!(doc["refused"].as_array().unwrap().len() > 5);
    assert_eq!(doc["warnings"], json!([]));

    let (ok, stdout, stderr) = clawhost(&["plugins", "inspect", "text-tools", "--json"], &config);
    assert!(ok, "{stderr}");
    let detail: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        detail["manifest"]["apiVersion"],
        clawhost_plugin_runtime::CURRENT_API
    );
    assert_eq!(detail["requested"]["filesystem"][0]["guestPath"], "/notes");
    assert_eq!(detail["grants"]["filesystem"], json!([]));
    assert_eq!(detail["sha256"].as_str().unwrap().len(), 64);
    let exports = detail["exports"].to_string();
    assert!(
        exports.contains("openclaw:plugin/tool-provider@0.2"),
        "{exports}"
    );
    let imports = detail["imports"].to_string();
    assert!(imports.contains("openclaw:plugin/host@0.2"), "{imports}");
    let word_count = detail["toolSchemas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "word_count")
        .unwrap();
    assert_eq!(word_count["parameters"]["type"], "object");
    let (ok, _, stderr) = clawhost(&["plugins", "inspect", "escape"], &config);
    assert!(!ok && stderr.contains("plugins.allow"), "{stderr}");
}

#[test]
fn a_refused_wanted_plugin_and_silent_mistakes_fail_the_command() {
    let root = tempfile::tempdir().unwrap();
    let config = write_config(
        root.path(),
        json!({
            "plugins": {
                "paths": [plugins()],
                "allow": ["text-tools", "policy-guard", "polcy-guard"],
                "entries": {"text-tools": {"sha256": "00".repeat(32)}}
            },
            "tools": {"deny": ["exce", "group:runtime"]}
        }),
    );
    let (ok, stdout, stderr) = clawhost(&["plugins"], &config);
    let all = format!("{stdout}\n{stderr}");
    assert!(!ok, "{all}");
    assert!(
        all.contains("text-tools") && all.contains("sha256"),
        "{all}"
    );
    assert!(
        all.contains("plugins.allow lists `polcy-guard`, but no package"),
        "{all}"
    );
    assert!(
        all.contains("tools.deny lists `exce`, which names no tool"),
        "{all}"
    );
    assert!(
        !all.contains("`group:runtime`, which names no tool"),
        "{all}"
    );
    assert!(
        all.contains("1 plugin(s) refused and 2 configuration mistake(s)"),
        "{all}"
    );
}

#[test]
fn precompile_compiles_what_a_warm_start_would_only_load_at_first_use() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let config = root.path().join("clawhost.json");
    let doc = json!({"plugins": {
        "paths": [plugins()], "allow": ["text-tools"],
        "cacheDir": cache, "cacheKeyFile": root.path().join("cache.key")}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let precompile = || {
        let (ok, stdout, stderr) = clawhost(&["plugins", "precompile"], &config);
        assert!(ok, "{stderr}");
        stdout
    };
    assert!(precompile().contains("text-tools: compiled"));
    assert!(precompile().contains("text-tools: already compiled"));
    // The artifact goes; the remembered registration stays. A warm start
    // would defer the component to its first call: precompile compiles it.
    for entry in std::fs::read_dir(&cache).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "cwasm") {
            std::fs::remove_file(path).unwrap();
        }
    }
    assert!(precompile().contains("text-tools: compiled"));
    assert!(precompile().contains("text-tools: already compiled"));
}

#[test]
fn a_tool_clash_and_a_grant_the_manifest_does_not_ask_for_are_reported_as_a_run_sees_them() {
    // text-tools asks for `/notes` and no env; the operator grants `$HOME`
    // and `/data` too. test-escape declares `WORD_COUNT` beside text-tools'
    // `word_count`: a run offers neither, and the listing says so.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("d")).unwrap();
    let config = write_config(
        root.path(),
        json!({"plugins": {"paths": [plugins()], "allow": ["text-tools", "escape"],
            "entries": {"text-tools": {"grants": {"env": ["HOME"],
                "filesystem": [{"guestPath": "/data", "hostPath": root.path().join("d"), "access": "read-only"}]}}}}}),
    );
    let (ok, stdout, stderr) = clawhost(&["plugins", "list", "--json"], &config);
    assert!(!ok, "a withheld tool fails the listing: {stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let text_tools = doc["loaded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "text-tools")
        .unwrap();
    let warnings = text_tools["warnings"].to_string();
    assert!(
        warnings.contains("$HOME") && warnings.contains("/data"),
        "{warnings}"
    );
    let listed = doc["warnings"].to_string();
    assert!(
        listed.contains("`word_count` is not offered")
            && listed.contains("`WORD_COUNT` is not offered"),
        "{listed}"
    );
    let (_, stdout, _) = clawhost(&["plugins", "doctor"], &config);
    assert!(
        stdout.contains("grants $HOME, which the manifest does not ask for"),
        "{stdout}"
    );
}
