//! Plugin API versions: plugins built against the frozen 0.1 and the released
//! 0.2.0, 0.2.1 and 0.2.2 keep loading and behave as their current (SDK) build does;
//! the SDK's WIT is the host's 0.2.

use clawhost_plugin_runtime::ApiVersion;
use clawhost_tests::{config, dispatch, json_of, runner_with};
use serde_json::{json, Value};

/// What policy-guard's config does, asked of one build of it.
async fn policy_outcomes(package: &str, id: &str) -> Vec<(bool, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"blockTools": ["echo"], "blockWords": ["secret"], "maxTextChars": 7});
    let cfg = config(
        json!({"plugins": {"entries": {id: {"config": policy}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &[package, "text-tools"]).await;
    let status = runner.plugins().plugin(id).expect("loaded").status();
    let expected = if package.ends_with("v0-1") {
        ApiVersion::V0_1
    } else {
        ApiVersion::V0_2
    };
    assert_eq!(status.api, expected);
    let mut outcomes = Vec::new();
    for (tool, args) in [
        ("echo", json!({"text": "hi"})),
        ("word_count", json!({"text": "a secret plan"})),
        ("word_count", json!({"text": "one two three four"})),
        ("word_count", json!({"text": "short"})),
    ] {
        let (out, _) = dispatch(&runner, tool, args).await;
        let content = if out.is_error {
            Value::String(out.content)
        } else {
            json_of(&out)
        };
        outcomes.push((out.is_error, content));
    }
    outcomes
}

#[tokio::test]
async fn a_plugin_built_against_api_0_1_loads_and_behaves_like_its_0_2_build() {
    let old = policy_outcomes("test-policy-guard-v0-1", "policy-guard-v0-1").await;
    let new = policy_outcomes("policy-guard", "policy-guard").await;
    assert_eq!(old, new);
    // And what they do is the policy: block, block, truncate, allow.
    assert!(
        old[0].0
            && old[0]
                .1
                .as_str()
                .unwrap()
                .contains("tool `echo` is blocked")
    );
    assert!(old[1].0 && old[1].1.as_str().unwrap().contains("mention `secret`"));
    assert_eq!(old[2], (false, json!({"words": 2, "lines": 1, "chars": 7})));
    assert_eq!(old[3], (false, json!({"words": 1, "lines": 1, "chars": 5})));
}

/// A fixture built against the released 0.2.`patch` behaves as the SDK
/// build does, and really is a 0.2.`patch` component: its exports say so.
async fn a_released_0_2_build_behaves_like_the_current_one(patch: u32) {
    let package = format!("test-policy-guard-v0-2-{patch}");
    let id = format!("policy-guard-v0-2-{patch}");
    let old = policy_outcomes(&package, &id).await;
    let new = policy_outcomes("policy-guard", "policy-guard").await;
    assert_eq!(old, new);
    let dir = tempfile::tempdir().unwrap();
    let host = clawhost_tests::host_with(&config(json!({}), dir.path()), &[&package])
        .await
        .unwrap();
    let status = host.plugin(&id).unwrap().status();
    assert_eq!(status.api, ApiVersion::V0_2);
    let wasm = std::fs::read(
        clawhost_tests::plugins_dir()
            .join(&package)
            .join("plugin.wasm"),
    )
    .unwrap();
    let text = String::from_utf8_lossy(&wasm);
    assert!(text.contains(&format!("openclaw:plugin/tool-hooks@0.2.{patch}")));
    assert!(!text.contains(&format!("@{}", clawhost_plugin_runtime::CURRENT_API)));
}

#[tokio::test]
async fn a_plugin_built_against_api_0_2_0_loads_and_behaves_like_its_current_build() {
    a_released_0_2_build_behaves_like_the_current_one(0).await;
}

#[tokio::test]
async fn a_plugin_built_against_api_0_2_1_loads_and_behaves_like_its_current_build() {
    a_released_0_2_build_behaves_like_the_current_one(1).await;
}

#[tokio::test]
async fn a_plugin_built_against_api_0_2_2_loads_and_behaves_like_its_current_build() {
    a_released_0_2_build_behaves_like_the_current_one(2).await;
}

#[tokio::test]
async fn the_ten_line_sdk_plugin_derives_its_schema_from_its_parameter_type() {
    let dir = tempfile::tempdir().unwrap();
    let runner = runner_with(config(json!({}), dir.path()), &["hello-tool"]).await;
    let (out, _) = dispatch(&runner, "greet", json!({"name": "Ada"})).await;
    assert_eq!(json_of(&out), json!("hello, Ada"));
    let plugin = runner.plugins().plugin("hello-tool").unwrap();
    let schema = &plugin.registration().tools[0].spec.parameters;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["name"]));
    assert_eq!(schema["properties"]["name"]["type"], "string");
    // The host validates against the derived schema before the plugin runs.
    let (out, _) = dispatch(&runner, "greet", json!({"name": 7})).await;
    assert!(
        out.is_error && out.content.contains("invalid arguments"),
        "{}",
        out.content
    );
}

#[test]
fn every_sdk_carries_the_hosts_0_2_wit_unchanged() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let released = root.join("wit/v0.2");
    let names = |dir: &std::path::Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    for sdk in ["sdk/rust/wit", "sdk/python/clawhost_sdk/wit", "sdk/js/wit"] {
        let copy = root.join(sdk);
        assert_eq!(names(&released), names(&copy), "{sdk}");
        for name in names(&released) {
            assert_eq!(
                std::fs::read_to_string(released.join(&name)).unwrap(),
                std::fs::read_to_string(copy.join(&name)).unwrap(),
                "{sdk}/{} differs from wit/v0.2",
                name.to_string_lossy()
            );
        }
    }
}

/// The current API version is written in one place (the host's
/// `CURRENT_API`); every other place that must name it is checked here.
#[test]
fn every_place_naming_the_current_api_agrees_with_the_host() {
    use clawhost_plugin_runtime::CURRENT_API as v;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let places = [
        ("sdk/rust/Cargo.toml", format!("version = \"{v}\"")),
        (
            "sdk/rust/src/lib.rs",
            format!("pub const API_VERSION: &str = \"{v}\";"),
        ),
        ("sdk/python/pyproject.toml", format!("version = \"{v}\"")),
        (
            "sdk/python/clawhost_sdk/__init__.py",
            format!("API_VERSION = \"{v}\""),
        ),
        ("sdk/js/package.json", format!("\"version\": \"{v}\"")),
        ("sdk/js/src/index.js", format!("'openclaw:plugin/host@{v}'")),
        (
            "wit/v0.2/worlds.wit",
            format!("package openclaw:plugin@{v};"),
        ),
    ];
    for (path, expected) in places {
        assert!(
            read(path).contains(&expected),
            "{path} does not say {expected}"
        );
    }
    // Every example is built against the current API; the fixtures pinned
    // to an older one on purpose are named.
    let pinned = [
        "test-hostile",
        "test-legacy-api",
        "test-policy-guard-v0-1",
        "test-policy-guard-v0-2-0",
        "test-policy-guard-v0-2-1",
        "test-policy-guard-v0-2-2",
    ];
    for entry in std::fs::read_dir(root.join("plugins")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = dir.join("openclaw.plugin.json");
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if !manifest.is_file() || pinned.contains(&name.as_str()) {
            continue;
        }
        let m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        assert_eq!(m["apiVersion"], v, "{name}");
    }
}

/// Within 0.2 a release only adds: with the items a later release marks
/// `@since(version = ...)` and the package line taken out, every file of the
/// released 0.2.0, 0.2.1 and 0.2.2 (kept unchanged in their fixtures) reads
/// the same in the current WIT.
#[test]
fn each_0_2_release_only_adds_to_the_one_before() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let current = root.join("wit/v0.2");
    // The body after the package line, without the items added since.
    let body = |text: &str, since: &[&str]| -> String {
        let after = text.split_once("package openclaw:plugin@").unwrap().1;
        let after = after.split_once('\n').unwrap().1;
        let mut out = Vec::new();
        let mut skip_next = false;
        for line in after.lines() {
            if since
                .iter()
                .any(|v| line.trim() == format!("@since(version = {v})"))
            {
                skip_next = true;
                continue;
            }
            if std::mem::take(&mut skip_next) {
                continue;
            }
            out.push(line);
        }
        out.join("\n")
    };
    let later = ["0.2.1", "0.2.2", "0.2.3"];
    for (i, released) in ["0.2.0", "0.2.1", "0.2.2"].into_iter().enumerate() {
        let patch = &released[4..];
        let dir = root.join(format!(
            "plugins/test-policy-guard-v0-2-{patch}/wit/deps/openclaw-plugin-{released}"
        ));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name();
            let old = std::fs::read_to_string(dir.join(&name)).unwrap();
            let new = std::fs::read_to_string(current.join(&name)).unwrap();
            assert!(old.contains(&format!("package openclaw:plugin@{released};")));
            assert_eq!(
                body(&old, &[]),
                body(&new, &later[i..]),
                "{} changed beyond additions since {released}",
                name.to_string_lossy()
            );
        }
    }
    // What 0.2.1, 0.2.2 and 0.2.3 add lives in files of their own, every
    // interface marked.
    for (file, version) in [
        ("hooks-0.2.1.wit", "0.2.1"),
        ("native-runtime-0.2.2.wit", "0.2.2"),
        ("turn-hooks-0.2.2.wit", "0.2.2"),
        ("prepare-hooks-0.2.3.wit", "0.2.3"),
        ("native-turn-0.2.3.wit", "0.2.3"),
    ] {
        let added = std::fs::read_to_string(current.join(file)).unwrap();
        let interfaces = added.matches("\ninterface ").count();
        assert!(interfaces >= 1, "{file}");
        assert_eq!(
            added
                .matches(&format!("@since(version = {version})\ninterface "))
                .count(),
            interfaces,
            "{file}"
        );
    }
}
