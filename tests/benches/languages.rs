//! The same plugin host work for a plugin written in Rust, Python and
//! JavaScript, side by side: component size, first compile, start from the
//! compiled cache, memory per extra instance (resident, and proportional:
//! pages shared between instances counted once), and the hook round trip of
//! `before_tool_call`, of `after_tool_call`, and of the two in a row.
//!
//! Run: `cargo bench -p clawhost-tests --bench languages` (a bench binary:
//! medians of repeated runs; BENCHMARKS.md records one).

use std::path::Path;
use std::time::{Duration, Instant};

use clawhost_config::Config;
use clawhost_hooks::{AfterToolCallEvent, BeforeToolCallEvent, CallContext, HookRunner};
use clawhost_plugin_runtime::PluginHost;
use clawhost_tests::plugins_dir;
use serde_json::json;

/// (language, package, plugin id): the examples, then no-op hooks (what
/// each SDK and runtime costs by itself).
const PLUGINS: [(&str, &str, &str); 6] = [
    ("Rust", "policy-guard", "policy-guard"),
    ("Python", "py-word-tools", "py-word-tools"),
    ("JavaScript", "js-word-tools", "js-word-tools"),
    ("Rust", "bench-noop", "noop"),
    ("Python", "py-bench-noop", "py-noop"),
    ("JavaScript", "js-bench-noop", "js-noop"),
];

fn config(cache: &Path) -> Config {
    let mut config = Config::from_json_str(
        &json!({"plugins": {"limits": {"memoryMb": 256, "callTimeoutMs": 30000}}}).to_string(),
        cache,
    )
    .unwrap();
    config.plugins.cache_dir = Some(cache.join("cache"));
    config.plugins.cache_key_file = Some(cache.join("cache.key"));
    config
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// A `<field>: <n> kB` line of a /proc file of this process, in KiB.
fn proc_kib(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/self/{file}"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Resident and proportional set sizes (KiB).
fn memory_kib() -> (u64, u64) {
    (
        proc_kib("status", "VmRSS:"),
        proc_kib("smaps_rollup", "Pss:"),
    )
}

fn ctx() -> CallContext {
    CallContext {
        agent_id: "main".into(),
        session_id: Some("s".into()),
        model_ref: "openai/gpt-5".into(),
    }
}

async fn measure(language: &str, package: &str, id: &str) {
    let dir = plugins_dir().join(package);
    let size = std::fs::metadata(dir.join("plugin.wasm")).unwrap().len();
    let scratch = tempfile::tempdir().unwrap();
    let config = config(scratch.path());
    // First compile: an empty cache.
    let started = Instant::now();
    let mut host = PluginHost::new(&config).unwrap();
    host.load_package(&dir).await.unwrap();
    let first = started.elapsed();
    drop(host);
    // Start from the compiled cache: a fresh host loading the package (a
    // warm start takes the remembered registration and leaves the
    // component to the first use), then that first use mapping it.
    let (mut starts, mut first_uses) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let mut host = PluginHost::new(&config).unwrap();
        let t = Instant::now();
        host.load_package(&dir).await.unwrap();
        starts.push(t.elapsed());
        let t = Instant::now();
        host.plugin(id).unwrap().load_component().await.unwrap();
        first_uses.push(t.elapsed());
    }
    // Resident memory of 4 more live instances (each called once).
    let mut host = PluginHost::new(&config).unwrap();
    host.load_package(&dir).await.unwrap();
    let plugin = host.plugin(id).unwrap().clone();
    let (rss_before, pss_before) = memory_kib();
    let mut extra = Vec::new();
    for _ in 0..4 {
        let mut h = PluginHost::new(&config).unwrap();
        h.load_package(&dir).await.unwrap();
        h.plugin(id).unwrap().restart().await.unwrap();
        extra.push(h);
    }
    let (rss_after, pss_after) = memory_kib();
    let per = |after: u64, before: u64| after.saturating_sub(before) as f64 / 4.0 / 1024.0;
    let (rss, pss) = (per(rss_after, rss_before), per(pss_after, pss_before));
    // Hook round trip into the first instance.
    let hooks = HookRunner::new(host.hook_registrations());
    let params = json!({"text": "a few words to count", "times": 2});
    let before_event = BeforeToolCallEvent {
        tool: "word_count".into(),
        call_id: "c1".into(),
        params: params.clone().into(),
        tool_plugin: None,
        context: ctx(),
    };
    let after_event = AfterToolCallEvent {
        tool: "word_count".into(),
        call_id: "c1".into(),
        params: params.clone().into(),
        outcome: Err(clawhost_agent_core::ToolError::Failed(String::new())),
        duration_ms: 1,
        context: ctx(),
    };
    let (mut befores, mut afters, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
    let rounds: usize = std::env::var("CLAWHOST_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(300);
    for _ in 0..rounds {
        // Fresh parameters and result each round, the parameters shared by
        // both events as the dispatcher shares them.
        let shared = clawhost_hooks::SharedJson::new(params.clone());
        let (b, a) = (
            BeforeToolCallEvent {
                params: shared.clone(),
                ..before_event.clone()
            },
            AfterToolCallEvent {
                params: shared,
                outcome: Ok(json!({"words": 5}).into()),
                ..after_event.clone()
            },
        );
        let t = Instant::now();
        let verdict = hooks.before_tool_call(b).await.verdict;
        let between = Instant::now();
        let _ = hooks.after_tool_call(a).await;
        let end = Instant::now();
        befores.push(between - t);
        afters.push(end - between);
        pairs.push(end - t);
        assert!(verdict.is_ok(), "{verdict:?}");
    }
    drop(plugin);
    let us = |xs: Vec<Duration>| median(xs).as_secs_f64() * 1e6;
    println!(
        "| {language} ({package}) | {:.2} MB | {:.2} s | {:.2} ms | {:.1} ms | {rss:.1} / {pss:.1} MiB | {:.1} / {:.1} / {:.1} µs |",
        size as f64 / 1e6,
        first.as_secs_f64(),
        median(starts).as_secs_f64() * 1e3,
        median(first_uses).as_secs_f64() * 1e3,
        us(befores),
        us(afters),
        us(pairs),
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` only checks that it builds
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("| plugin | component | first compile | start from cache (median) | its first use: the component mapped (median) | RSS / PSS per extra instance | hook round trip, before / after / both (median) |");
    println!("|---|---|---|---|---|---|---|");
    // `CLAWHOST_BENCH_ONLY=Python` measures one language (for profiling).
    let only = std::env::var("CLAWHOST_BENCH_ONLY").ok();
    for (language, package, id) in PLUGINS {
        if only.as_deref().is_none_or(|o| o == language) {
            rt.block_on(measure(language, package, id));
        }
    }
}
