//! One tool call three ways, in one run, each through clawhost's dispatch
//! path on the calling side (policy, schema, hooks, transcript-ready
//! result):
//! - `word_count` of the WASM plugin `text-tools`, called inside the host
//!   (what a turn does);
//! - the same WASM tool through `clawhost mcp serve` over stdio (the real
//!   binary: MCP framing, a second dispatch path, the session record);
//! - the same work in a tool of a server made with the official Python MCP
//!   SDK over stdio (what a user would otherwise write).
//!
//! Run: `cargo build --release -p clawhost && cargo bench -p clawhost-tests
//! --bench mcp` (`CLAWHOST_BIN` names another binary; BENCHMARKS.md records
//! one run).

use std::time::{Duration, Instant};

use clawhost_mcp_client::McpServers;
use clawhost_runner::EmbeddedRunner;
use clawhost_tests::python::mcp_stdio;
use clawhost_tests::{config, dispatch, host_with, plugins_dir};
use serde_json::json;

const WARMUP: usize = 50;
const CALLS: usize = 1000;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let bin = std::env::var_os("CLAWHOST_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| clawhost::build::repo_root().join("target/release/clawhost"));
    assert!(
        bin.exists(),
        "{} is missing: `cargo build --release -p clawhost` first",
        bin.display()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), "[]").unwrap();
    let target = clawhost::build::repo_root().join("target");
    let served = json!({
        "plugins": {
            "paths": [plugins_dir()], "allow": ["text-tools"],
            "cacheDir": target.join("component-cache"),
            "cacheKeyFile": target.join("component-cache.key"),
        },
        "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json"}}},
        "agents": {"defaults": {"model": "scripted/test"}},
    });
    let served_path = dir.path().join("served.json");
    std::fs::write(&served_path, served.to_string()).unwrap();
    let cfg = config(
        json!({
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json"}}},
            "agents": {"defaults": {"model": "scripted/test"}},
            "mcp": {"servers": {
                "clawhost": {"command": bin, "args": ["--config", served_path, "mcp", "serve"]},
                "python": mcp_stdio("tools_server.py", &["stdio"], json!({})),
            }},
        }),
        dir.path(),
    );
    let host = host_with(&cfg, &["text-tools"]).await.unwrap();
    let mcp = McpServers::start(&cfg).await;
    let runner = EmbeddedRunner::from_sources(cfg, host, mcp).unwrap();
    println!("one call of word_count, {CALLS} calls after {WARMUP} warm-up calls:");
    println!("| path | median | p90 | mean |");
    println!("|---|---|---|---|");
    for (label, tool) in [
        ("WASM tool inside the host (a turn's call)", "word_count"),
        (
            "the same tool through `clawhost mcp serve` (stdio)",
            "mcp__clawhost__word_count",
        ),
        (
            "Python MCP SDK server, same work (stdio)",
            "mcp__python__word_count",
        ),
    ] {
        let times = measure(&runner, tool).await;
        println!(
            "| {label} | {} | {} | {} |",
            micros(times[times.len() / 2]),
            micros(times[times.len() * 9 / 10]),
            micros(times.iter().sum::<Duration>() / times.len() as u32),
        );
    }
}

async fn measure(runner: &EmbeddedRunner, tool: &str) -> Vec<Duration> {
    let args = json!({"text": "the quick brown fox jumps over the lazy dog"});
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let started = Instant::now();
        let (out, _) = dispatch(runner, tool, args.clone()).await;
        let took = started.elapsed();
        assert!(
            !out.is_error && out.content.contains("9"),
            "{tool}: {}",
            out.content
        );
        if i >= WARMUP {
            times.push(took);
        }
    }
    times.sort();
    times
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}
