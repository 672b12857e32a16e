//! Sandbox escapes through the host's own resources (issue: "the sandbox must
//! hold"): the compiled-component cache, grants that follow paths, host-side
//! log, handle and file budgets, plugin identity and names. Each test plays an
//! allowlisted but hostile plugin (`plugins/test-escape`) against the host.

use std::path::Path;
use std::time::{Duration, Instant};

use clawhost_agent_core::ToolExecutor;
use clawhost_plugin_runtime::{CacheOutcome, LoadError, PluginHost};
use clawhost_tests::{call_tool, config, host_with, plugins_dir, runner_with};
use serde_json::{json, Value};

/// A config whose cache and cache key live in `root` (not the shared test cache).
fn private_cache(mut cfg: clawhost_config::Config, root: &Path) -> clawhost_config::Config {
    cfg.plugins.cache_dir = Some(root.join("cache"));
    cfg.plugins.cache_key_file = Some(root.join("state").join("cache.key"));
    cfg
}

fn grants(rw: &Path, ro: &Path) -> Value {
    json!({"grants": {"filesystem": [
        {"guestPath": "/rw", "hostPath": rw, "access": "read-write"},
        {"guestPath": "/ro", "hostPath": ro, "access": "read-only"}
    ]}})
}

#[tokio::test]
async fn a_tampered_cache_artifact_is_recompiled_never_run() {
    let root = tempfile::tempdir().unwrap();
    let cfg = private_cache(config(json!({}), root.path()), root.path());
    let first = host_with(&cfg, &["text-tools"]).await.unwrap();
    assert!(!first.plugin("text-tools").unwrap().status().from_cache);
    let second = host_with(&cfg, &["text-tools"]).await.unwrap();
    assert!(second.plugin("text-tools").unwrap().status().from_cache);

    // Whoever can write the cache flips native code: the tag no longer verifies.
    // (Package records, in `packages/`, are authenticated the same way:
    // see the cache's unit tests and declarations.rs.)
    for entry in std::fs::read_dir(root.path().join("cache")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x55;
        std::fs::write(&path, bytes).unwrap();
    }
    // A warm start leaves the component to the first call, which finds the
    // artifact refused and runs a fresh compile.
    let third = host_with(&cfg, &["text-tools"]).await.unwrap();
    let words = call_tool(&third, "text-tools", "word_count", json!({"text": "a b"}))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(words["words"], 2);
    let plugin = third.plugin("text-tools").unwrap();
    assert_eq!(
        plugin.load_component().await.unwrap(),
        CacheOutcome::Compiled
    );
    assert!(!plugin.status().from_cache);
}

#[tokio::test]
async fn a_cache_inside_a_grant_or_a_grant_over_the_config_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let shared = root.path().join("shared");
    let ro = root.path().join("ro");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(&ro).unwrap();
    let mut cfg = config(
        json!({"plugins": {"entries": {"escape": grants(&shared, &ro)}}}),
        root.path(),
    );
    cfg.plugins.cache_dir = Some(shared.join("cache"));
    cfg.plugins.cache_key_file = Some(root.path().join("state").join("key"));
    let err = PluginHost::new(&cfg).err().expect("refused").to_string();
    assert!(
        err.contains("plugins.cacheDir")
            && err.contains("plugins.entries.escape.grants.filesystem[0]"),
        "{err}"
    );

    // The config file sits in a dir the operator grants: that grant is refused.
    let mut cfg = private_cache(
        config(
            json!({"plugins": {"entries": {"escape": grants(&shared, &ro)}}}),
            root.path(),
        ),
        root.path(),
    );
    cfg.source = Some(ro.join("clawhost.json"));
    std::fs::write(ro.join("clawhost.json"), "{}").unwrap();
    let err = host_with(&cfg, &["test-escape"])
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("config file"), "{err}");
}

#[tokio::test]
async fn a_symlink_planted_in_one_grant_does_not_move_another() {
    let root = tempfile::tempdir().unwrap();
    let rw = root.path().join("rw");
    let ro = rw.join("inner");
    let outside = root.path().join("outside");
    for d in [&ro, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(ro.join("inner.txt"), "mine").unwrap();
    std::fs::write(outside.join("secret.txt"), "not yours").unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"escape": grants(&rw, &ro)}}}),
        root.path(),
    );
    let host = host_with(&cfg, &["test-escape"]).await.unwrap();
    // Replace the read-only grant's directory with a symlink out of every grant.
    let planted = call_tool(
        &host,
        "escape",
        "symlink",
        json!({"target": "../outside", "link": "/rw/inner"}),
    )
    .await
    .unwrap();
    assert_eq!(planted, Ok(json!({"planted": true})));
    assert!(std::fs::symlink_metadata(&ro)
        .unwrap()
        .file_type()
        .is_symlink());
    // A fresh instance (as after any trap) must still see the grant it had.
    host.plugin("escape").unwrap().restart().await.unwrap();
    let listed = call_tool(&host, "escape", "list", json!({"path": "/ro"}))
        .await
        .unwrap();
    let names = listed.map(|v| v["names"].clone()).unwrap_or(json!([]));
    assert!(
        !names.to_string().contains("secret"),
        "the read-only grant moved outside: {names}"
    );
    let read = call_tool(&host, "escape", "read", json!({"path": "/ro/secret.txt"}))
        .await
        .unwrap();
    assert!(read.is_err(), "{read:?}");
}

#[tokio::test]
async fn grants_of_two_plugins_may_not_nest_where_one_writes() {
    let root = tempfile::tempdir().unwrap();
    let rw = root.path().join("rw");
    let ro = root.path().join("ro");
    let data = rw.join("data");
    for d in [&ro, &data] {
        std::fs::create_dir_all(d).unwrap();
    }
    let entries = json!({
        "escape": grants(&rw, &ro),
        "misbehave": {"grants": {"filesystem": [
            {"guestPath": "/data", "hostPath": data, "access": "read-write"}
        ]}}
    });
    let cfg = config(json!({"plugins": {"entries": entries}}), root.path());
    let err = host_with(&cfg, &["test-escape", "test-misbehave"])
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&err, LoadError::Grant { id, reason, .. } if id == "misbehave" && reason.contains("escape") && reason.contains("allowOverlappingGrants")),
        "{err}"
    );
    let cfg = config(
        json!({"plugins": {"allowOverlappingGrants": true, "entries": entries}}),
        root.path(),
    );
    host_with(&cfg, &["test-escape", "test-misbehave"])
        .await
        .unwrap();
}

#[tokio::test]
async fn a_log_flood_is_cut_to_the_budget() {
    let root = tempfile::tempdir().unwrap();
    let cfg = config(json!({}), root.path());
    let host = host_with(&cfg, &["test-escape"]).await.unwrap();
    // 200 lines of 64 KiB: 12.5 MiB the host would otherwise hold.
    let out = call_tool(
        &host,
        "escape",
        "log_flood",
        json!({"lines": 200, "kb": 64}),
    )
    .await
    .unwrap();
    assert_eq!(out, Ok(json!({"logged": 200})));
    let logs = host.plugin("escape").unwrap().logs();
    let kept: usize = logs.iter().map(|l| l.message.len()).sum();
    assert!(kept <= 300 << 10, "kept {kept} bytes");
    assert!(logs.iter().all(|l| l.message.len() <= 9 << 10));
    let last = &logs.last().unwrap().message;
    assert!(
        last.contains("dropped") && last.contains("maxLogKbPerCall"),
        "{last}"
    );
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[tokio::test]
async fn hoarding_handles_stops_at_the_cap_and_leaves_the_host_its_descriptors() {
    let root = tempfile::tempdir().unwrap();
    let (rw, ro) = (root.path().join("rw"), root.path().join("ro"));
    for d in [&rw, &ro] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(ro.join("f"), "x").unwrap();
    let cfg = config(
        json!({"plugins": {"limits": {"maxHandles": 64}, "entries": {"escape": grants(&rw, &ro)}}}),
        root.path(),
    );
    let host = host_with(&cfg, &["test-escape", "text-tools"])
        .await
        .unwrap();
    let before = open_fds();
    let hoard = call_tool(
        &host,
        "escape",
        "hoard",
        json!({"path": "/ro/f", "n": 5000}),
    )
    .await;
    let opened = match &hoard {
        Ok(Ok(v)) => v["opened"].as_u64().unwrap_or(0),
        _ => 0,
    };
    assert!(opened < 64, "the plugin opened {opened} files: {hoard:?}");
    assert!(
        open_fds() <= before + 70,
        "the host holds {} descriptors more",
        open_fds() - before
    );
    let words = call_tool(
        &host,
        "text-tools",
        "word_count",
        json!({"text": "still here"}),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(words["words"], 2);
}

#[tokio::test]
async fn a_tool_name_clash_withholds_both_tools_whatever_the_load_order() {
    // `test-escape` declares `WORD_COUNT`, `text-tools` `word_count`: in
    // either order neither is offered (a plugin named to load first takes
    // nothing), both plugins keep their other tools, and the clash is
    // reported for each.
    for order in [["text-tools", "test-escape"], ["test-escape", "text-tools"]] {
        let root = tempfile::tempdir().unwrap();
        let runner = runner_with(config(json!({}), root.path()), &order).await;
        assert!(runner.refused().is_empty(), "{order:?}");
        let names: Vec<String> = runner
            .dispatcher()
            .specs(&clawhost_agent_core::RunContext::new("t", "scripted/t"))
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(
            !names.iter().any(|n| n.eq_ignore_ascii_case("word_count")),
            "{order:?}: {names:?}"
        );
        assert!(names.contains(&"read_note".to_string()), "{names:?}");
        let clash: Vec<_> = runner
            .withheld()
            .iter()
            .filter(|w| w.tool.eq_ignore_ascii_case("word_count"))
            .collect();
        let who: Vec<(&str, &str)> = clash
            .iter()
            .map(|w| (w.plugin.as_str(), w.tool.as_str()))
            .collect();
        assert_eq!(who.len(), 2, "{order:?}: {who:?}");
        assert!(who.contains(&("escape", "WORD_COUNT")));
        assert!(who.contains(&("text-tools", "word_count")));
        assert!(
            clash[0].reason.contains("`escape`, `text-tools`"),
            "{}",
            clash[0].reason
        );
    }
}

#[tokio::test]
async fn a_plugin_replaces_a_built_in_tool_only_where_the_operator_says_so() {
    // `test-escape` (built before the built-in tools existed) has a `write`.
    let root = tempfile::tempdir().unwrap();
    let specs = |runner: &clawhost_runner::EmbeddedRunner| {
        runner
            .dispatcher()
            .specs(&clawhost_agent_core::RunContext::new("t", "scripted/t"))
            .into_iter()
            .find(|s| s.name == "write")
            .map(|s| s.description)
            .unwrap()
    };
    let runner = runner_with(config(json!({}), root.path()), &["test-escape"]).await;
    assert!(
        specs(&runner).contains("parent directories are created"),
        "the built-in stays"
    );
    let write = runner
        .withheld()
        .iter()
        .find(|w| w.tool == "write")
        .unwrap();
    assert!(write.reason.contains("replaceBuiltins"), "{}", write.reason);
    let cfg = config(
        json!({"plugins": {"entries": {"escape": {"replaceBuiltins": ["write"]}}}}),
        root.path(),
    );
    let runner = runner_with(cfg, &["test-escape"]).await;
    assert!(
        !specs(&runner).contains("parent directories are created"),
        "the plugin's"
    );
    assert!(!runner.withheld().iter().any(|w| w.tool == "write"));
}

/// Copy a built package to `dir`, optionally with a custom section appended
/// to its component (a different sha256, the same behaviour).
fn copy_package(name: &str, dir: &Path, variant: bool) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let src = plugins_dir().join(name);
    std::fs::copy(
        src.join("openclaw.plugin.json"),
        dir.join("openclaw.plugin.json"),
    )
    .unwrap();
    let mut wasm = std::fs::read(src.join("plugin.wasm")).unwrap();
    if variant {
        wasm.extend_from_slice(&[0, 4, 3, b'x', b'y', b'z']);
    }
    std::fs::write(dir.join("plugin.wasm"), &wasm).unwrap();
    clawhost_plugin_runtime::sha256_hex(&wasm)
}

#[tokio::test]
async fn two_packages_claiming_one_id_are_refused_unless_a_pin_decides() {
    let root = tempfile::tempdir().unwrap();
    let packages = root.path().join("packages");
    copy_package("text-tools", &packages.join("a-impostor"), true);
    let real = copy_package("text-tools", &packages.join("z-real"), false);
    let mut cfg = config(json!({}), root.path());
    cfg.plugins.paths = vec![packages.clone()];
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    assert!(host.plugin("text-tools").is_none());
    assert_eq!(reports.iter().filter(|r| r.result.is_err()).count(), 2);
    let err = reports[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("2 packages claim this id"), "{err}");

    cfg.plugins.entries.insert(
        "text-tools".into(),
        clawhost_config::PluginEntry {
            sha256: Some(real),
            ..Default::default()
        },
    );
    let mut host = PluginHost::new(&cfg).unwrap();
    host.load_configured().await;
    assert!(host.plugin("text-tools").unwrap().dir().ends_with("z-real"));
}

#[tokio::test]
async fn an_id_is_claimed_across_plugin_paths_and_by_a_package_that_fails_to_prepare() {
    // The impostor sits in an earlier `plugins.paths` entry than the real
    // package: neither takes the id, its config or its grants.
    let root = tempfile::tempdir().unwrap();
    let early = root.path().join("early");
    let late = root.path().join("late");
    copy_package("text-tools", &early.join("text-tools"), true);
    copy_package("text-tools", &late.join("text-tools"), false);
    let mut cfg = config(json!({}), root.path());
    cfg.plugins.paths = vec![early.clone(), late.clone()];
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    assert!(host.plugin("text-tools").is_none(), "{reports:?}");
    let err = reports[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("2 packages claim this id"), "{err}");

    // The real package fails to prepare (its component is damaged): the
    // impostor does not inherit the id.
    std::fs::write(
        late.join("text-tools").join("plugin.wasm"),
        b"\0asm damaged",
    )
    .unwrap();
    let mut host = PluginHost::new(&cfg).unwrap();
    let reports = host.load_configured().await;
    assert!(host.plugin("text-tools").is_none(), "{reports:?}");
    let err = reports[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("2 packages claim this id"), "{err}");
}

#[tokio::test]
async fn a_component_path_outside_the_package_or_not_a_file_is_refused_quickly() {
    let root = tempfile::tempdir().unwrap();
    let cfg = config(json!({}), root.path());
    let manifest = |component: &str| {
        json!({"id": "odd", "version": "0.1.0", "apiVersion": "0.1.0", "component": component})
            .to_string()
    };
    let mut host = PluginHost::new(&cfg).unwrap();

    let dotdot = root.path().join("dotdot");
    std::fs::create_dir_all(&dotdot).unwrap();
    std::fs::write(
        dotdot.join("openclaw.plugin.json"),
        manifest("../x/plugin.wasm"),
    )
    .unwrap();
    let err = host.load_package(&dotdot).await.err().unwrap().to_string();
    assert!(err.contains("inside the package"), "{err}");

    let zero = root.path().join("zero");
    std::fs::create_dir_all(&zero).unwrap();
    std::fs::write(zero.join("openclaw.plugin.json"), manifest("plugin.wasm")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("plugin.wasm")).unwrap();
    let err = host.load_package(&zero).await.err().unwrap().to_string();
    assert!(err.contains("outside the package"), "{err}");

    let fifo = root.path().join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    std::fs::write(fifo.join("openclaw.plugin.json"), manifest("plugin.wasm")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(fifo.join("plugin.wasm"))
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(10), host.load_package(&fifo))
        .await
        .expect("a FIFO must not hang start-up")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("regular file"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_operator_pins_hook_priorities() {
    let root = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"policy-guard": {"hooks": {"before_tool_call": {"priority": -7}}}}}}),
        root.path(),
    );
    let host = host_with(&cfg, &["policy-guard"]).await.unwrap();
    let regs = host.hook_registrations();
    assert!(
        regs.iter().all(|r| r.priority == -7),
        "{:?}",
        regs.iter().map(|r| r.priority).collect::<Vec<_>>()
    );
    let status = host.plugin("policy-guard").unwrap().status();
    assert_eq!(status.hooks, vec![("before_tool_call".to_string(), -7)]);
}

#[tokio::test]
async fn an_oversized_registration_is_refused_with_the_bound_it_broke() {
    let dir = tempfile::tempdir().unwrap();
    let load = |declare: Value| {
        let cfg = config(
            json!({"plugins": {"entries": {"escape": {"config": {"declare": declare}}}}}),
            dir.path(),
        );
        async move { host_with(&cfg, &["test-escape"]).await.err() }
    };
    for (declare, says) in [
        (json!({"filters": 65}), "65 tool patterns; at most 64"),
        (json!({"filters": 1, "patternChars": 300}), "at most 256"),
        (json!({"tools": 200}), "declares 208 tools; at most 128"),
    ] {
        let err = load(declare.clone())
            .await
            .unwrap_or_else(|| panic!("{declare} loaded"));
        let text = err.to_string();
        assert!(matches!(err, LoadError::Registration { .. }), "{text}");
        assert!(text.contains(says) && text.len() < 400, "{declare}: {text}");
    }
    // Within the bounds it loads, the hook narrowed to its patterns.
    let ok = load(json!({"filters": 2, "patternChars": 4})).await;
    assert!(ok.is_none(), "{ok:?}");
}
