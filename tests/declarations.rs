//! Remembered declarations: a warm start offers a plugin's tools and hooks
//! from a verified record of its earlier `register` answer and instantiates
//! it on first use, where the answer is checked again.

use std::path::Path;

use clawhost_config::Config;
use clawhost_plugin_runtime::{CacheOutcome, CallError, Declaration, PluginHost};
use clawhost_tests::{call_tool, config, copy_package, dispatch, host_with, plugins_dir};
use serde_json::json;

/// A config with its own cache (so no other test's records are seen) that
/// grants the misbehave fixture `/data` → `<dir>/data`.
fn own_cache(dir: &Path) -> Config {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let mut cfg = config(
        json!({"plugins": {"entries": {"misbehave": {"grants": {"filesystem": [
            {"guestPath": "/data", "hostPath": "data", "access": "read-only"}]}}}}}),
        dir,
    );
    cfg.plugins.cache_dir = Some(dir.join("cache"));
    cfg.plugins.cache_key_file = Some(dir.join("cache.key"));
    cfg
}

/// The hooks it subscribed (offered or withheld by the operator's settings).
fn hooks(host: &PluginHost) -> Vec<&'static str> {
    host.plugins()[0]
        .registration()
        .hooks
        .iter()
        .map(|(h, _)| h.name())
        .collect()
}

/// The package records in the test's cache (one per component file).
fn records(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir.join("cache").join("packages"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_warm_start_offers_the_tools_without_instantiating_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = own_cache(dir.path());
    let first = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let status = &first.statuses()[0];
    assert_eq!(status.declaration, Declaration::Called);
    assert_eq!(status.instantiations, 1, "register ran at load");
    assert_eq!(records(dir.path()).len(), 1);

    let second = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let status = &second.statuses()[0];
    assert_eq!(status.declaration, Declaration::Remembered);
    assert_eq!(status.instantiations, 0, "nothing ran at load");
    assert_eq!(status.tools, first.statuses()[0].tools);
    assert_eq!(hooks(&second), ["before_tool_call"]);
    // Its schemas compile at their first use, and still hold: arguments
    // against a remembered schema are refused before the plugin runs.
    let runner = clawhost_runner::EmbeddedRunner::from_plugins(
        cfg.clone(),
        host_with(&cfg, &["test-misbehave"]).await.unwrap(),
    )
    .unwrap();
    let (out, _) = dispatch(&runner, "read_path", json!({"path": 7})).await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.contains("invalid arguments"), "{}", out.content);
    assert_eq!(runner.plugins().statuses()[0].instantiations, 0);
    // The first call instantiates it; `register` ran first, as at a load.
    let pong = call_tool(&second, "misbehave", "ping", json!({})).await;
    assert_eq!(pong.unwrap().unwrap(), json!({"pong": true, "calls": 1}));
    let status = &second.statuses()[0];
    assert_eq!(status.instantiations, 1);
    assert_eq!(status.declaration, Declaration::Remembered, "same answer");

    // Another config is another key: register is called again.
    let mut other = cfg.clone();
    other.plugins.entries.get_mut("misbehave").unwrap().config = json!({"spinOn": "none"});
    let third = host_with(&other, &["test-misbehave"]).await.unwrap();
    assert_eq!(third.statuses()[0].declaration, Declaration::Called);
    // Both are remembered, in the component's one record: the configs can
    // alternate and each start stays warm.
    assert_eq!(records(dir.path()).len(), 1);
    for cfg in [&cfg, &other] {
        let host = host_with(cfg, &["test-misbehave"]).await.unwrap();
        assert_eq!(host.statuses()[0].declaration, Declaration::Remembered);
    }
}

#[tokio::test]
async fn a_registration_that_changed_is_noticed_and_taken_at_the_next_load() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = own_cache(dir.path());
    host_with(&cfg, &["test-misbehave"]).await.unwrap();
    // The fixture subscribes `agent_end` while this file exists: nothing
    // the host keys the record by has changed.
    std::fs::write(dir.path().join("data").join("subscribe-agent-end"), "").unwrap();

    let stale = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    assert_eq!(hooks(&stale), ["before_tool_call"], "the record's answer");
    call_tool(&stale, "misbehave", "ping", json!({}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stale.statuses()[0].declaration, Declaration::Outdated);
    assert_eq!(hooks(&stale), ["before_tool_call"], "kept for this load");

    let next = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    assert_eq!(next.statuses()[0].declaration, Declaration::Remembered);
    assert_eq!(hooks(&next), ["agent_end", "before_tool_call"]);
}

#[tokio::test]
async fn a_tampered_record_is_not_believed() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = own_cache(dir.path());
    host_with(&cfg, &["test-misbehave"]).await.unwrap();
    // A plugin that could write here would move its hook ahead of every
    // other plugin's, in both places the declaration is kept (its package
    // record and its record by key): each holds the hook's name, then its
    // priority (postcard: zigzag varint, 1000 → d0 0f; -1000 → cf 0f).
    let by_key = std::fs::read_dir(dir.path().join("cache").join("declarations"))
        .unwrap()
        .map(|e| e.unwrap().path());
    let mut forged = 0;
    for record in records(dir.path()).into_iter().chain(by_key) {
        let mut bytes = std::fs::read(&record).unwrap();
        if let Some(at) = bytes
            .windows(18)
            .position(|w| w == b"before_tool_call\xd0\x0f")
        {
            bytes[at + 16] = 0xcf;
            std::fs::write(&record, bytes).unwrap();
            forged += 1;
        }
    }
    assert_eq!(forged, 2);

    let host = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    let status = &host.statuses()[0];
    assert_eq!(status.declaration, Declaration::Called);
    assert_eq!(status.instantiations, 1);
    let priorities = &host.plugins()[0].registration().hooks;
    assert_eq!(
        priorities.iter().map(|(_, p)| *p).collect::<Vec<_>>(),
        [1000]
    );
    // The record was rewritten from the real answer, and is believed again.
    let again = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    assert_eq!(again.statuses()[0].declaration, Declaration::Remembered);
}

#[tokio::test]
async fn a_changed_registration_that_fails_its_check_is_forgotten_and_refused_next() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = own_cache(dir.path());
    host_with(&cfg, &["test-misbehave"]).await.unwrap();
    // The fixture now declares a tool whose schema does not compile.
    std::fs::write(dir.path().join("data").join("declare-bad-schema"), "").unwrap();

    let stale = host_with(&cfg, &["test-misbehave"]).await.unwrap();
    call_tool(&stale, "misbehave", "ping", json!({}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stale.statuses()[0].declaration, Declaration::Outdated);

    // The failing answer is not remembered, and the old one is forgotten
    // (it would load, offering the old tools).
    let err = host_with(&cfg, &["test-misbehave"]).await.err().unwrap();
    assert!(err.to_string().contains("odd"), "{err}");
}

#[tokio::test]
async fn a_warm_start_maps_the_component_at_first_use_and_only_the_one_it_checked() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = own_cache(dir.path());
    let pkg = dir.path().join("misbehave");
    copy_package(&plugins_dir().join("test-misbehave"), &pkg);
    let load = || async {
        let mut host = PluginHost::new(&cfg).unwrap();
        host.load_package(&pkg).await.unwrap();
        host
    };
    let first = load().await;
    let outcome = first.plugins()[0].load_component().await.unwrap();
    assert_eq!(outcome, CacheOutcome::Compiled, "an empty cache");

    // Warm: the component is mapped from the cache at the first call.
    let second = load().await;
    let pong = call_tool(&second, "misbehave", "ping", json!({})).await;
    assert_eq!(pong.unwrap().unwrap(), json!({"pong": true, "calls": 1}));
    let outcome = second.plugins()[0].load_component().await.unwrap();
    assert_eq!(outcome, CacheOutcome::Hit);

    // Warm again, then, before the first call, the component file is
    // replaced and the compiled artifacts are gone: what would run is not
    // what the load checked (and pinned), so the call is refused and
    // nothing of the new file is compiled.
    let third = load().await;
    let other = plugins_dir().join("hello-tool").join("plugin.wasm");
    std::fs::copy(other, pkg.join("plugin.wasm")).unwrap();
    let artifacts = || {
        std::fs::read_dir(dir.path().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .collect::<Vec<_>>()
    };
    for artifact in artifacts() {
        std::fs::remove_file(artifact).unwrap();
    }
    let err = call_tool(&third, "misbehave", "ping", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Unloadable { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("changed since the plugin was loaded"),
        "{err}"
    );
    assert!(artifacts().is_empty(), "the new file was compiled");
    assert_eq!(third.statuses()[0].instantiations, 0);
}

#[tokio::test]
async fn the_same_component_at_another_path_starts_from_the_remembered_declaration() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = own_cache(dir.path());
    let load = |pkg: std::path::PathBuf| {
        let cfg = cfg.clone();
        async move {
            let mut host = PluginHost::new(&cfg).unwrap();
            host.load_package(&pkg).await.unwrap();
            host.statuses()[0].declaration
        }
    };
    let staged = dir.path().join(".staged");
    copy_package(&plugins_dir().join("test-misbehave"), &staged);
    assert_eq!(load(staged.clone()).await, Declaration::Called);
    // Installed: moved into place, as `plugins install` does after
    // checking the staged copy.
    let installed = dir.path().join("misbehave");
    std::fs::rename(&staged, &installed).unwrap();
    assert_eq!(load(installed.clone()).await, Declaration::Remembered);
    assert_eq!(load(installed).await, Declaration::Remembered);
    // One package record per path the component was read at.
    assert_eq!(records(dir.path()).len(), 2);
}

#[tokio::test]
async fn a_warm_start_reads_an_edited_manifest_again() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    copy_package(&plugins_dir().join("hello-tool"), &plugins.join("hello"));
    let mut cfg = config(json!({"plugins": {"allow": ["hello-tool"]}}), dir.path());
    cfg.plugins.paths = vec![plugins.clone()];
    cfg.plugins.cache_dir = Some(dir.path().join("cache"));
    cfg.plugins.cache_key_file = Some(dir.path().join("cache.key"));
    let start = || async {
        let mut host = PluginHost::new(&cfg).unwrap();
        let reports = host.load_configured().await;
        assert!(reports.iter().all(|r| r.result.is_ok()), "{reports:?}");
        let status = &host.statuses()[0];
        (
            host.plugins()[0].registration().version.clone(),
            status.declaration,
        )
    };
    assert_eq!(start().await, ("0.1.0".to_string(), Declaration::Called));
    assert_eq!(
        start().await,
        ("0.1.0".to_string(), Declaration::Remembered)
    );
    // An edited manifest is read again at once; the component and its
    // declaration are unchanged, so it stays remembered.
    let manifest = plugins.join("hello").join("openclaw.plugin.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"0.1.0\"", "\"0.2.0\"")).unwrap();
    assert_eq!(
        start().await,
        ("0.2.0".to_string(), Declaration::Remembered)
    );
}
