//! Plugin-host benchmarks (criterion): instantiation from the compiled cache,
//! the tool-call hook round trip into a component, tool calls with large
//! arguments, host start to first model request, and resident memory.
//!
//! Run: `cargo bench -p clawhost-tests --bench plugins`. Medians are printed at
//! the end, with resident memory; BENCHMARKS.md records a run.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use clawhost_agent_core::{
    ModelClient, ModelError, ModelRequest, ModelResponse, RunContext, StopReason, ToolCallRequest,
    ToolExecutor, Usage,
};
use clawhost_config::Config;
use clawhost_hooks::{AfterToolCallEvent, BeforeToolCallEvent, CallContext, HookRunner};
use clawhost_plugin_runtime::PluginHost;
use clawhost_runner::EmbeddedRunner;
use clawhost_tests::{cache_dir, noop_packages, plugins_dir};
use criterion::{BatchSize, BenchmarkId, Criterion};
use serde_json::{json, Value};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn ctx() -> CallContext {
    CallContext {
        agent_id: "main".into(),
        session_id: Some("1733150000000-a1b2c3".into()),
        model_ref: "openai/gpt-5".into(),
    }
}

/// A realistic tool call: a file edit with a few hundred bytes of parameters.
fn realistic_params() -> Value {
    json!({
        "path": "/workspace/src/handlers/session.rs",
        "old_text": "let session = store.open(agent, id)?;\n    session.touch();",
        "new_text": "let mut session = store.open(agent, id)?;\n    session.touch();\n    session.flush()?;",
        "options": {"create": false, "backup": true, "encoding": "utf-8"}
    })
}

fn realistic_result() -> Value {
    json!({
        "applied": true,
        "path": "/workspace/src/handlers/session.rs",
        "diff": "@@ -41,2 +41,3 @@\n-    let session = store.open(agent, id)?;\n+    let mut session = store.open(agent, id)?;\n     session.touch();\n+    session.flush()?;\n",
        "lines": {"before": 212, "after": 213},
        "checks": [{"name": "fmt", "ok": true}, {"name": "build", "ok": true}]
    })
}

fn instantiate(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (_dir, config) = noop_packages(1);
    c.bench_function("plugin/engine_setup", |b| {
        b.iter(|| PluginHost::new(&config).unwrap())
    });
    let host = rt.block_on(async {
        let mut host = PluginHost::new(&config).unwrap();
        host.load_configured().await;
        host
    });
    let plugin = host.plugin("noop-0").unwrap().clone();
    c.bench_function("plugin/instantiate_from_cache", |b| {
        b.to_async(rt)
            .iter(|| async { plugin.restart().await.unwrap() })
    });
}

fn hook_round_trip(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (_dir, config) = noop_packages(1);
    let host = rt.block_on(async {
        let mut host = PluginHost::new(&config).unwrap();
        host.load_configured().await;
        host
    });
    let hooks = HookRunner::new(host.hook_registrations());
    let before = BeforeToolCallEvent {
        tool: "edit_file".into(),
        call_id: "call_7f3a".into(),
        params: realistic_params().into(),
        tool_plugin: Some("files".into()),
        context: ctx(),
    };
    let after = AfterToolCallEvent {
        tool: "edit_file".into(),
        call_id: "call_7f3a".into(),
        params: realistic_params().into(),
        outcome: Err(clawhost_agent_core::ToolError::Failed(String::new())),
        duration_ms: 3,
        context: ctx(),
    };
    // Building the events (the dispatcher does that) is set-up, not timed;
    // serializing them into the guest, the calls and the answers are timed.
    // Fresh parameters and result each time, the parameters shared by both
    // events as the dispatcher shares them (so each JSON text is made once
    // per call, in the timing).
    c.bench_function("hooks/noop_before_and_after_tool_call", |b| {
        b.to_async(rt).iter_batched(
            || {
                let params = clawhost_hooks::SharedJson::new(realistic_params());
                (
                    BeforeToolCallEvent {
                        params: params.clone(),
                        ..before.clone()
                    },
                    AfterToolCallEvent {
                        params,
                        outcome: Ok(clawhost_hooks::SharedJson::new(realistic_result())),
                        ..after.clone()
                    },
                )
            },
            |(before, after)| async {
                let verdict = hooks.before_tool_call(before).await.verdict;
                let (_, observed) = hooks.after_tool_call(after).await;
                (verdict.unwrap(), observed.decisions.len())
            },
            BatchSize::SmallInput,
        )
    });
}

fn tool_calls(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (_dir, config) = noop_packages(1);
    let (runner, _) = rt.block_on(EmbeddedRunner::start(config)).unwrap();
    let item = json!({"id": 12345, "name": "item name", "tags": ["a", "b", "c"], "score": 0.75});
    let per_item = item.to_string().len() + 1;
    let mut group = c.benchmark_group("dispatch/tool_call");
    for (label, bytes) in [("1KB", 1usize << 10), ("1MB", 1 << 20)] {
        let data = Value::Array(vec![item.clone(); bytes / per_item]);
        let call = ToolCallRequest {
            id: "call_1".into(),
            name: "noop_0_measure".into(),
            arguments: json!({ "data": data }),
        };
        group.bench_with_input(BenchmarkId::from_parameter(label), &call, |b, call| {
            b.to_async(rt).iter(|| async {
                // A fresh run each time: a run's event log only grows.
                let run = RunContext::new("main", "scripted/m");
                let out = runner.dispatcher().execute(call, &run).await;
                assert!(!out.is_error, "{}", out.content);
            })
        });
    }
    group.finish();
}

/// A model that asks for `n` calls of one tool in its first reply, then
/// answers.
struct Calls {
    tool: &'static str,
    arguments: Value,
    n: usize,
}

#[async_trait]
impl ModelClient for Calls {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let first = matches!(
            request.messages.last().map(|m| &**m),
            Some(clawhost_agent_core::Message::User { .. })
        );
        let tool_calls = if first {
            (0..self.n)
                .map(|i| ToolCallRequest {
                    id: format!("call_{i}"),
                    name: self.tool.into(),
                    arguments: self.arguments.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(ModelResponse {
            text: if tool_calls.is_empty() {
                "done".into()
            } else {
                String::new()
            },
            stop_reason: if tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            },
            tool_calls,
            usage: Usage::default(),
            reasoning: Vec::new(),
        })
    }
}

/// Whole turns in which the model asks for 50 tool calls in one message,
/// on one thread (as `clawhost run` and `chat` run turns), beside the same
/// turn with no call: a native host tool (the baseline), a WASM tool, and a
/// WASM tool with WASM `before`/`after_tool_call` hooks.
fn turn_with_tool_calls(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let variants: [(&str, &[&str], &'static str, Value, usize); 4] = [
        ("no_calls", &[], "echo", json!({"text": "x"}), 0),
        ("native_echo", &[], "echo", json!({"text": "a b c"}), 50),
        (
            "wasm_tool",
            &["text-tools"],
            "word_count",
            json!({"text": "a b c"}),
            50,
        ),
        (
            "wasm_tool_and_hooks",
            &["text-tools", "noop"],
            "word_count",
            json!({"text": "a b c"}),
            50,
        ),
    ];
    let mut group = c.benchmark_group("turn/tool_calls");
    group.sample_size(30);
    for (label, plugins, tool, arguments, n) in variants {
        let mut config = Config::from_json_str(
            &json!({"plugins": {"allow": plugins}, "tools": {"testFixtures": true}}).to_string(),
            Path::new("."),
        )
        .unwrap();
        config.plugins.paths = vec![plugins_dir().to_path_buf()];
        config.plugins.cache_dir = Some(cache_dir());
        config.plugins.cache_key_file = Some(clawhost_tests::cache_key_file());
        let (runner, _) = rt.block_on(EmbeddedRunner::start(config)).unwrap();
        let model = Arc::new(Calls { tool, arguments, n });
        group.bench_function(label, |b| {
            b.to_async(&rt).iter(|| async {
                let ctx = RunContext::new("main", "bench/m");
                let out = runner
                    .run_turn(model.clone(), &ctx, &[], "go")
                    .await
                    .unwrap();
                assert_eq!(out.answer, "done");
                assert_eq!(out.new_messages.len(), if n == 0 { 2 } else { 3 + n });
            })
        });
    }
    group.finish();
}

/// A model that notes when the first request arrives and answers at once.
struct FirstRequest(Mutex<Option<Instant>>);

#[async_trait]
impl ModelClient for FirstRequest {
    async fn complete(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.0.lock().unwrap().get_or_insert_with(Instant::now);
        Ok(ModelResponse {
            text: "ok".into(),
            tool_calls: vec![],
            usage: Usage::default(),
            stop_reason: StopReason::EndTurn,
            reasoning: Vec::new(),
        })
    }
}

fn start_to_first_request(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("start/first_model_request");
    group.sample_size(20);
    for n in [1usize, 20, 100] {
        let (_dir, config) = noop_packages(n);
        group.bench_with_input(BenchmarkId::new("plugins", n), &config, |b, config| {
            b.to_async(rt).iter_custom(|iters| {
                let config = config.clone();
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let model = Arc::new(FirstRequest(Mutex::new(None)));
                        // A process starts from the config it loaded: the
                        // bench's own copy of it is made before the clock.
                        let config = config.clone();
                        let started = Instant::now();
                        let (runner, reports) = EmbeddedRunner::start(config).await.unwrap();
                        assert!(reports.iter().all(|r| r.result.is_ok()));
                        let specs = runner
                            .dispatcher()
                            .specs(&RunContext::new("main", "scripted/test"));
                        let plugin_tools = specs
                            .iter()
                            .filter(|s| s.name.ends_with("_measure"))
                            .count();
                        assert_eq!(plugin_tools, n);
                        let ctx = RunContext::new("main", "scripted/m");
                        runner
                            .run_turn(model.clone(), &ctx, &[], "hi")
                            .await
                            .unwrap();
                        let first = model.0.lock().unwrap().expect("the model was asked");
                        total += first - started;
                    }
                    total
                }
            })
        });
    }
    group.finish();
}

/// Start with an empty compiled cache: `n` packages of one component (the
/// first start after installing copies of a plugin).
fn start_with_empty_cache(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("start/empty_cache");
    group.sample_size(10);
    for n in [1usize, 20, 100] {
        let (_dir, config) = noop_packages(n);
        group.bench_with_input(BenchmarkId::new("plugins", n), &config, |b, config| {
            b.to_async(rt).iter_custom(|iters| {
                let config = config.clone();
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let cache = tempfile::tempdir().unwrap();
                        let mut config = config.clone();
                        config.plugins.cache_dir = Some(cache.path().join("cache"));
                        config.plugins.cache_key_file = Some(cache.path().join("key"));
                        let started = Instant::now();
                        let (_runner, reports) = EmbeddedRunner::start(config).await.unwrap();
                        total += started.elapsed();
                        assert!(reports.iter().all(|r| r.result.is_ok()));
                    }
                    total
                }
            })
        });
    }
    group.finish();
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The child of [`resident_memory`]: start a host with `n` plugins, call
/// each plugin's tool once (unless `idle`: then none may have been
/// instantiated), print `VmRSS VmHWM` (KiB) and exit.
fn rss_child(n: usize, idle: bool) {
    let (_dir, config) = noop_packages(n);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (runner, reports) = EmbeddedRunner::start(config).await.unwrap();
        assert!(reports.iter().all(|r| r.result.is_ok()), "{reports:?}");
        if idle {
            let statuses = runner.plugins().statuses();
            assert!(
                statuses.iter().all(|s| s.instantiations == 0),
                "{statuses:?}"
            );
        }
        for i in (0..n).filter(|_| !idle) {
            let call = ToolCallRequest {
                id: "c".into(),
                name: format!("noop_{i}_measure"),
                arguments: json!({"data": realistic_params()}),
            };
            let out = runner
                .dispatcher()
                .execute(&call, &RunContext::new("main", "scripted/m"))
                .await;
            assert!(!out.is_error, "{}", out.content);
        }
        println!("{} {}", status_kib("VmRSS"), status_kib("VmHWM"));
    });
}

/// Resident memory of a whole host (engine, cache, runner) with 0, 10 and
/// 100 plugins loaded and each called once, each measured in a process of
/// its own (in one process, earlier allocations blur the figure).
fn resident_memory() -> Vec<String> {
    let measure = |n: usize, idle: bool| -> (f64, f64) {
        let how = if idle { " idle" } else { "" };
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env("CLAWHOST_BENCH_RSS_CHILD", format!("{n}{how}"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let mut kib = text
            .lines()
            .last()
            .unwrap_or_default()
            .split_whitespace()
            .map(|v| v.parse::<f64>().unwrap() / 1024.0);
        (kib.next().unwrap(), kib.next().unwrap())
    };
    let (base, base_peak) = measure(0, false);
    let mut lines = vec![format!(
        "resident memory: host with no plugin {base:.1} MiB (peak {base_peak:.1} MiB)"
    )];
    for n in [10usize, 100] {
        // Called first: that start leaves the remembered registrations the
        // idle start loads from.
        for (idle, what) in [(false, "each called once"), (true, "none called yet")] {
            let (rss, peak) = measure(n, idle);
            lines.push(format!(
                "resident memory: host with {n} plugins, {what} {rss:.1} MiB (peak {peak:.1} MiB; {:.2} MiB per plugin)",
                (rss - base) / n as f64
            ));
        }
    }
    lines
}

/// The median of each benchmark, read from criterion's estimates.
fn medians(root: &Path) -> Vec<String> {
    let mut found: Vec<PathBuf> = walk(root)
        .into_iter()
        .filter(|p| p.ends_with("new/estimates.json"))
        .collect();
    found.sort();
    found
        .iter()
        .filter_map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
            let ns = v["median"]["point_estimate"].as_f64()?;
            let name = p
                .parent()?
                .parent()?
                .strip_prefix(root)
                .ok()?
                .display()
                .to_string();
            Some(format!("median {name}: {}", human(ns)))
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn human(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{:.2} ms", ns / 1_000_000.0)
    }
}

fn main() {
    if let Ok(how) = std::env::var("CLAWHOST_BENCH_RSS_CHILD") {
        let (n, idle) = match how.strip_suffix(" idle") {
            Some(n) => (n, true),
            None => (how.as_str(), false),
        };
        return rss_child(n.parse().unwrap(), idle);
    }
    let out = clawhost::build::repo_root()
        .join("target")
        .join("criterion");
    let mut c = Criterion::default()
        .output_directory(&out)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let rt = runtime();
    plugins_dir(); // build the plugins before timing anything
    let memory = resident_memory();
    instantiate(&mut c, &rt);
    hook_round_trip(&mut c, &rt);
    tool_calls(&mut c, &rt);
    turn_with_tool_calls(&mut c);
    start_to_first_request(&mut c, &rt);
    start_with_empty_cache(&mut c, &rt);
    c.final_summary();
    println!("\n== summary");
    for line in medians(&out).into_iter().chain(memory) {
        println!("{line}");
    }
}
