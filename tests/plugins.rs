//! Loading real plugin components: tools, hooks, admission and API versions.

use std::sync::Arc;

use clawhost_agent_core::{Message, RunContext, TurnEvent};
use clawhost_llm::ScriptedModel;
use clawhost_plugin_runtime::{LoadError, PluginHost};
use clawhost_tests::{
    config, copy_package, dispatch, host_with, json_of, plugins_dir, runner_with,
};
use serde_json::json;

#[tokio::test]
async fn a_plugin_tool_round_trips_through_the_dispatcher() {
    let dir = tempfile::tempdir().unwrap();
    let runner = runner_with(config(json!({}), dir.path()), &["text-tools"]).await;
    let (out, _) = dispatch(&runner, "word_count", json!({"text": "one two\nthree"})).await;
    assert_eq!(json_of(&out), json!({"words": 3, "lines": 2, "chars": 13}));

    // Arguments that break the plugin's schema never reach the plugin.
    let (out, _) = dispatch(&runner, "word_count", json!({"txt": "x"})).await;
    assert!(
        out.is_error && out.content.contains("invalid arguments"),
        "{}",
        out.content
    );
    let status = &runner.plugins().statuses()[0];
    assert_eq!(status.tools, vec!["word_count", "read_note"]);
}

#[tokio::test]
async fn a_whole_turn_calls_the_plugin_tool_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let runner = runner_with(config(json!({}), dir.path()), &["text-tools"]).await;
    let model = ScriptedModel::from_json(
        r#"[{"toolCalls":[{"name":"word_count","arguments":{"text":"{{user}}"}}]},{"answer":"counted: {{results}}"}]"#,
    )
    .unwrap();
    let ctx = RunContext::new("main", "scripted/test");
    let out = runner
        .run_turn(Arc::new(model), &ctx, &[], "a b c d")
        .await
        .unwrap();
    assert_eq!(
        out.answer,
        r#"counted: - word_count returned: {"chars":7,"lines":1,"words":4}"#
    );
    assert!(matches!(&out.new_messages[2], Message::ToolResult(r) if !r.is_error));
}

#[tokio::test]
async fn before_tool_call_blocks_by_rule_even_for_host_tools() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"policy-guard": {"config": {"blockTools": ["echo"]}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["policy-guard", "text-tools"]).await;
    let (out, ctx) = dispatch(&runner, "echo", json!({"text": "hi"})).await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content.contains("blocked") && out.content.contains("`echo`"),
        "{}",
        out.content
    );
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, decision, .. }
            if hook.name() == "before_tool_call" && plugin == "policy-guard" && decision.starts_with("block"))));
    // Other tools pass.
    let (out, _) = dispatch(&runner, "word_count", json!({"text": "fine"})).await;
    assert_eq!(json_of(&out)["words"], 1);
}

#[tokio::test]
async fn a_tool_hook_receives_only_the_calls_its_subscription_matches() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"policy-guard": {"config": {
            "blockWords": ["secret"],
            "onlyTools": ["WORD_*"]
        }}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["policy-guard", "text-tools"]).await;
    // `word_count` matches the glob (without regard to case): the hook blocks.
    let (out, _) = dispatch(&runner, "word_count", json!({"text": "a secret"})).await;
    assert!(
        out.is_error && out.content.contains("`secret`"),
        "{}",
        out.content
    );
    // `echo` does not match: the hook is not even asked.
    let (out, ctx) = dispatch(&runner, "echo", json!({"text": "a secret"})).await;
    assert_eq!(json_of(&out), json!({"text": "a secret"}));
    assert!(!ctx
        .events
        .snapshot()
        .iter()
        .any(|e| matches!(e, TurnEvent::HookDecision { .. })));
}

#[tokio::test]
async fn before_tool_call_rewrites_parameters_before_the_tool_sees_them() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"policy-guard": {"config": {"maxTextChars": 5}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["policy-guard", "text-tools"]).await;
    let (out, ctx) = dispatch(&runner, "word_count", json!({"text": "abcdefghij klm"})).await;
    assert_eq!(json_of(&out), json!({"words": 1, "lines": 1, "chars": 5}));
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { decision, .. } if decision.starts_with("rewrite"))));
}

/// Two real before_tool_call hooks on one call: `misbehave` (priority 1000)
/// patches `text` when asked; `policy-guard` (100) truncates `text` past 5 chars.
async fn patched_print(runner: &clawhost_runner::EmbeddedRunner, patch: &str) -> (bool, String) {
    let args = json!({"text": "hi", "hook": "patch", "patch_text": patch});
    let (out, ctx) = dispatch(runner, "print", args).await;
    let printed = runner
        .plugins()
        .plugin("misbehave")
        .unwrap()
        .logs()
        .iter()
        .rev()
        .find(|l| l.source == clawhost_plugin_runtime::LogSource::Stdout)
        .map(|l| l.message.clone())
        .unwrap_or_default();
    let decisions: Vec<String> = ctx
        .events
        .snapshot()
        .iter()
        .filter_map(|e| match e {
            TurnEvent::HookDecision {
                plugin, decision, ..
            } => Some(format!("{plugin}: {decision}")),
            _ => None,
        })
        .collect();
    if out.is_error {
        (
            false,
            format!("{} | {}", out.content, decisions.join(" | ")),
        )
    } else {
        (true, format!("{printed} | {}", decisions.join(" | ")))
    }
}

#[tokio::test]
async fn before_tool_call_patches_merge_and_a_policy_hook_rechecks_what_will_run() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"policy-guard": {"config": {"maxTextChars": 5}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["policy-guard", "test-misbehave"]).await;
    // Both hooks see the original `text` ("hi"); the patch is merged over it
    // and policy-guard, which allowed "hi", is asked again with "abc": allowed.
    let (ran, seen) = patched_print(&runner, "abc").await;
    assert!(ran, "{seen}");
    assert!(seen.starts_with("abc | "), "{seen}");
    assert!(
        seen.contains("misbehave: rewrite") && seen.contains("policy-guard: allow"),
        "{seen}"
    );
    // A patch past policy-guard's limit is caught by the re-check: policy-guard
    // never saw that text on the first pass, and would truncate it now.
    let (ran, seen) = patched_print(&runner, "abcdefgh").await;
    assert!(!ran, "{seen}");
    assert!(
        seen.contains(
            "plugin `policy-guard` approved the call before other hooks changed its parameters"
        ) && seen.contains("policy-guard: re-check after rewrite: rewrite"),
        "{seen}"
    );
}

#[tokio::test]
async fn granted_tool_result_middleware_replaces_the_result_the_model_sees() {
    let dir = tempfile::tempdir().unwrap();
    let granted =
        json!({"plugins": {"entries": {"redact-results": {"grants": {"toolResults": true}}}}});
    let runner = runner_with(config(granted, dir.path()), &["redact-results"]).await;
    let (out, _) = dispatch(
        &runner,
        "echo",
        json!({"text": "key sk-abcdef1234567890 mail bo@example.org ok"}),
    )
    .await;
    assert_eq!(
        json_of(&out),
        json!({"text": "key [REDACTED] mail [REDACTED] ok", "redactions": 2})
    );
    let (out, ctx) = dispatch(&runner, "echo", json!({"text": "nothing to hide"})).await;
    assert_eq!(json_of(&out), json!({"text": "nothing to hide"}));
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. } if hook.name() == "tool_result" && decision == "keep")));

    // Without the grant the middleware is withheld: the result stays as the tool gave it.
    let runner = runner_with(config(json!({}), dir.path()), &["redact-results"]).await;
    let status = &runner.plugins().statuses()[0];
    assert_eq!(
        status.withheld,
        [("tool_result".to_string(), "grants.toolResults")]
    );
    let secret = json!({"text": "key sk-abcdef1234567890"});
    let (out, _) = dispatch(&runner, "echo", secret.clone()).await;
    assert_eq!(json_of(&out), secret);
}

#[tokio::test]
async fn after_tool_call_observers_never_change_the_result_even_when_they_fail() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"context-hooks": {"hooks": {"after_tool_call": {"failPolicy": "block"}}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["context-hooks"]).await;
    let (out, ctx) = dispatch(&runner, "echo", json!({"text": "hi"})).await;
    assert_eq!(json_of(&out), json!({"text": "hi"}));
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, decision, .. }
            if hook.name() == "after_tool_call" && plugin == "context-hooks" && decision == "observed")));
    let logs = runner.plugins().plugin("context-hooks").unwrap().logs();
    assert!(logs.iter().any(|l| l.message
        == "observed after_tool_call echo ok=true duration_ms=0"
        || l.message
            .starts_with("observed after_tool_call echo ok=true")));
}

#[tokio::test]
async fn deny_listed_and_not_allowlisted_plugins_are_refused_by_name_and_rule() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"allow": ["text-tools", "policy-guard"], "deny": ["policy-guard"]}}),
        dir.path(),
    );
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    let message = |id: &str| {
        reports
            .iter()
            .find(|r| r.id.as_deref() == Some(id))
            .and_then(|r| r.result.as_ref().err())
            .map(|e| e.to_string())
            .unwrap_or_else(|| panic!("{id} should be refused"))
    };
    assert_eq!(
        message("policy-guard"),
        r#"plugin `policy-guard` refused: plugins.deny lists "policy-guard""#
    );
    assert_eq!(
        message("redact-results"),
        "plugin `redact-results` refused: plugins.allow is set and does not list it"
    );
    assert_eq!(
        message("misbehave"),
        "plugin `misbehave` refused: plugins.allow is set and does not list it"
    );
    let loaded: Vec<_> = host.plugins().iter().map(|p| p.id().to_string()).collect();
    assert_eq!(loaded, vec!["text-tools"]);
}

#[tokio::test]
async fn a_component_that_does_not_match_its_sha256_pin_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pin = "0".repeat(64);
    let cfg = config(
        json!({"plugins": {"entries": {"text-tools": {"sha256": pin}}}}),
        dir.path(),
    );
    let err = host_with(&cfg, &["text-tools"])
        .await
        .err()
        .expect("pin mismatch refuses");
    assert!(
        matches!(&err, LoadError::Refused { id, rule } if id == "text-tools" && rule.contains("sha256")),
        "{err}"
    );

    // The right pin loads (computed by sha256sum, not by the host's own code).
    let out = std::process::Command::new("sha256sum")
        .arg(plugins_dir().join("text-tools/plugin.wasm"))
        .output()
        .unwrap();
    let real = String::from_utf8(out.stdout).unwrap()[..64].to_uppercase();
    let cfg = config(
        json!({"plugins": {"entries": {"text-tools": {"sha256": real}}}}),
        dir.path(),
    );
    host_with(&cfg, &["text-tools"])
        .await
        .expect("matching pin loads");
}

#[tokio::test]
async fn a_plugin_built_against_another_api_version_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(json!({}), dir.path());
    let err = host_with(&cfg, &["test-legacy-api"])
        .await
        .err()
        .expect("legacy API refused");
    let message = err.to_string();
    assert!(matches!(err, LoadError::ApiVersion { .. }), "{message}");
    assert!(
        message.contains("`legacy-api`")
            && message.contains("0.0.1")
            && message.contains("0.1 (oldest) to 0.2 (newest)")
            && message.contains("clawhost-sdk 0.2"),
        "{message}"
    );

    // A manifest that lies about its version is still caught by the component check.
    let fake = tempfile::tempdir().unwrap();
    let manifest =
        std::fs::read_to_string(plugins_dir().join("test-legacy-api/openclaw.plugin.json"))
            .unwrap();
    std::fs::write(
        fake.path().join("openclaw.plugin.json"),
        manifest.replace("\"apiVersion\": \"0.0.1\"", "\"apiVersion\": \"0.1.0\""),
    )
    .unwrap();
    std::fs::copy(
        plugins_dir().join("test-legacy-api/plugin.wasm"),
        fake.path().join("plugin.wasm"),
    )
    .unwrap();
    let mut host = PluginHost::new(&cfg).unwrap();
    let err = host
        .load_package(fake.path())
        .await
        .err()
        .expect("component check refuses");
    assert!(
        err.to_string()
            .contains("exporting openclaw:plugin/plugin@0.0.1"),
        "{err}"
    );
}

#[tokio::test]
async fn a_config_that_breaks_the_manifest_config_schema_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |config: serde_json::Value| {
        let cfg = config_with_policy(dir.path(), config);
        async move {
            host_with(&cfg, &["policy-guard"])
                .await
                .err()
                .expect("refused")
        }
    };
    let err = refused(json!({"maxTextChars": "many"})).await;
    assert!(matches!(err, LoadError::Config { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("plugins.entries.policy-guard.config.maxTextChars")
            && text.contains("\"many\" is not of type \"integer\""),
        "{text}"
    );
    let text = refused(json!({"blokTools": ["echo"]})).await.to_string();
    assert!(
        text.contains("plugins.entries.policy-guard.config:") && text.contains("blokTools"),
        "{text}"
    );
    // What the schema allows loads.
    let cfg = config_with_policy(
        dir.path(),
        json!({"blockTools": ["echo"], "maxTextChars": 9}),
    );
    host_with(&cfg, &["policy-guard"])
        .await
        .expect("a valid config loads");
}

fn config_with_policy(dir: &std::path::Path, policy: serde_json::Value) -> clawhost_config::Config {
    config(
        json!({"plugins": {"entries": {"policy-guard": {"config": policy}}}}),
        dir,
    )
}

#[tokio::test]
async fn openclaw_plugin_keys_load_paths_and_enabled_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    // `plugins.load.paths` is searched like `plugins.paths`.
    let mut cfg = config(json!({"plugins": {"allow": ["text-tools"]}}), dir.path());
    cfg.plugins.load.paths = std::mem::take(&mut cfg.plugins.paths);
    cfg.check().expect("load.paths exist");
    let mut host = PluginHost::new(&cfg).unwrap();
    host.load_configured().await;
    let ids: Vec<&str> = host.plugins().iter().map(|p| p.id()).collect();
    assert_eq!(ids, ["text-tools"]);
    // `plugins.enabled: false` loads nothing, and refuses nothing.
    let cfg = config(json!({"plugins": {"enabled": false}}), dir.path());
    let mut host = PluginHost::new(&cfg).unwrap();
    assert!(host.load_configured().await.is_empty());
    assert!(host.plugins().is_empty());
}

#[tokio::test]
async fn a_package_on_two_plugin_paths_is_loaded_once_and_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    // What `--plugin <dir>` does when the package also lies under
    // `plugins.paths`: the same directory is reached twice.
    let mut cfg = config(json!({"plugins": {"allow": ["text-tools"]}}), dir.path());
    cfg.plugins.load.paths = vec![plugins_dir().join("text-tools")];
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    let text_tools: Vec<_> = reports
        .iter()
        .filter(|r| r.id.as_deref() == Some("text-tools"))
        .collect();
    assert_eq!(text_tools.len(), 1, "{reports:?}");
    assert!(text_tools[0].result.is_ok(), "{reports:?}");
}

#[tokio::test]
async fn only_subdirectories_holding_a_manifest_are_packages_and_each_loads_once() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    copy_package(
        &plugins_dir().join("text-tools"),
        &plugins.join("text-tools"),
    );
    // Not packages, and not errors: a directory without a manifest, a
    // file, a symlink to a file, a hidden package.
    std::fs::create_dir_all(plugins.join("node_modules")).unwrap();
    std::fs::write(plugins.join("README.md"), "notes").unwrap();
    std::os::unix::fs::symlink(plugins.join("README.md"), plugins.join("notes")).unwrap();
    copy_package(&plugins_dir().join("hello-tool"), &plugins.join(".staging"));
    // A symlink to the package is the same package.
    std::os::unix::fs::symlink(plugins.join("text-tools"), plugins.join("zz-link")).unwrap();
    let mut cfg = config(json!({"plugins": {"allow": ["text-tools"]}}), dir.path());
    cfg.plugins.paths = vec![plugins.clone()];
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    let found: Vec<_> = reports
        .iter()
        .map(|r| (r.dir.file_name().unwrap().to_owned(), r.result.is_ok()))
        .collect();
    assert_eq!(found, [("text-tools".into(), true)], "{reports:?}");
}

#[tokio::test]
async fn compiled_components_are_reused_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(json!({}), dir.path());
    cfg.plugins.cache_dir = Some(dir.path().join("cache"));
    cfg.plugins.cache_key_file = Some(dir.path().join("cache.key"));
    let first = host_with(&cfg, &["text-tools"]).await.unwrap();
    assert!(!first.statuses()[0].from_cache);
    let second = host_with(&cfg, &["text-tools"]).await.unwrap();
    assert!(second.statuses()[0].from_cache);
    // One compiled artifact with its tag file, and one package record of
    // the component (its digest and declaration).
    let cache = dir.path().join("cache");
    let mut files: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| p.extension().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["cwasm", "tag"]);
    assert_eq!(
        std::fs::read_dir(cache.join("packages")).unwrap().count(),
        1
    );
}

#[tokio::test]
async fn identical_components_loading_together_are_compiled_once() {
    let (dir, mut cfg) = clawhost_tests::noop_packages(4);
    cfg.plugins.cache_dir = Some(dir.path().join("cache"));
    cfg.plugins.cache_key_file = Some(dir.path().join("cache.key"));
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    assert!(reports.iter().all(|r| r.result.is_ok()), "{reports:?}");
    let compiled = host.statuses().iter().filter(|s| !s.from_cache).count();
    assert_eq!(compiled, 1, "four copies of one component, compiled once");
    let artifacts = std::fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("cwasm".as_ref()))
        .count();
    assert_eq!(artifacts, 1);
}

#[tokio::test]
async fn a_required_plugin_that_is_refused_stops_the_agent_from_starting() {
    let dir = tempfile::tempdir().unwrap();
    let guarded = |entry: serde_json::Value| {
        config(
            json!({"plugins": {"allow": ["policy-guard", "text-tools"], "entries": {"policy-guard": entry}}}),
            dir.path(),
        )
    };
    // A wrong pin refuses the guard: no agent without it.
    let err = clawhost_runner::EmbeddedRunner::start(guarded(
        json!({"required": true, "sha256": "00".repeat(32)}),
    ))
    .await
    .err()
    .expect("the runner must not start")
    .to_string();
    assert!(
        err.contains("required plugins")
            && err.contains("`policy-guard`")
            && err.contains("sha256"),
        "{err}"
    );
    // Not required: the same refusal is reported and the agent runs.
    let (runner, reports) =
        clawhost_runner::EmbeddedRunner::start(guarded(json!({"sha256": "00".repeat(32)})))
            .await
            .unwrap();
    assert!(runner.plugins().plugin("policy-guard").is_none());
    assert!(reports
        .iter()
        .any(|r| r.id.as_deref() == Some("policy-guard") && r.result.is_err()));
    // Required and loaded: it starts.
    let (runner, _) = clawhost_runner::EmbeddedRunner::start(guarded(json!({"required": true})))
        .await
        .unwrap();
    assert!(runner.plugins().plugin("policy-guard").is_some());
}
