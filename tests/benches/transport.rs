//! Benchmarks (run with `cargo bench -p clawhost-tests --bench transport`):
//! SSE parse throughput per provider format, and the host's per-turn overhead
//! for one full turn (tool call + answer) over loopback against the fake
//! provider, beyond the time the server itself takes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_agent_core::RunContext;
use clawhost_llm::providers::{anthropic, openai_completions, openai_responses};
use clawhost_llm::transport::read_stream;
use clawhost_llm::EventParser;
use clawhost_llm::ModelRegistry;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::wire;
use serde_json::json;

fn big_stream(events: Vec<String>, repeat_middle: usize) -> Vec<u8> {
    // Repeat the delta events so the stream is large, keeping head and tail.
    let (head, rest) = events.split_at(2);
    let (middle, tail) = rest.split_at(rest.len() - 3);
    let mut out = head.concat();
    for _ in 0..repeat_middle {
        out.push_str(&middle.concat());
    }
    out.push_str(&tail.concat());
    out.into_bytes()
}

async fn parse_throughput(name: &str, bytes: &[u8], make: impl Fn() -> Box<dyn EventParser>) {
    let chunks: Vec<Vec<u8>> = bytes.chunks(1400).map(<[u8]>::to_vec).collect();
    let rounds = 20;
    let started = Instant::now();
    for _ in 0..rounds {
        let stream = futures::stream::iter(
            chunks
                .iter()
                .cloned()
                .map(Ok::<_, std::convert::Infallible>),
        );
        let mut parser = make();
        read_stream(
            stream,
            parser.as_mut(),
            Duration::from_secs(5),
            "bench",
            None,
        )
        .await
        .expect("fixture parses");
    }
    let secs = started.elapsed().as_secs_f64();
    let mb = (bytes.len() * rounds) as f64 / 1e6;
    println!(
        "sse parse  {name:<20} {:>8.1} MB/s  ({} KB stream x {rounds})",
        mb / secs,
        bytes.len() / 1000
    );
}

#[tokio::main]
async fn main() {
    let pieces: Vec<&str> = [
        "The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog. ",
    ]
    .to_vec();
    parse_throughput(
        "openai-completions",
        &big_stream(wire::chat_text(&pieces, 1, 1), 400),
        || Box::<openai_completions::Parser>::default(),
    )
    .await;
    parse_throughput(
        "openai-responses",
        &big_stream(wire::responses_text(&pieces, 1, 1), 400),
        || Box::<openai_responses::Parser>::default(),
    )
    .await;
    parse_throughput(
        "anthropic-messages",
        &big_stream(wire::anthropic_text(&pieces, 1, 1), 400),
        || Box::<anthropic::Parser>::default(),
    )
    .await;

    // One turn = tool call reply + answer reply, over loopback.
    let turns = 300;
    let fake = FakeProvider::start().await;
    let tool_call = wire::chat_tool_call("call_1", "echo", &["{\"text\":", "\"hi\"}"]);
    let answer = wire::chat_text(&["done"], 10, 2);
    for _ in 0..turns {
        fake.push(Reply::sse(tool_call.clone()));
        fake.push(Reply::sse(answer.clone()));
    }
    let config = clawhost_config::Config::from_json_str(
        &json!({"models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url()}}},
                "tools": {"testFixtures": true}})
        .to_string(),
        std::path::Path::new("."),
    )
    .unwrap();
    let registry = Arc::new(ModelRegistry::build(&config).unwrap());
    let host = clawhost_plugin_runtime::PluginHost::new(&config).unwrap();
    let runner = clawhost_runner::EmbeddedRunner::from_plugins(config, host).unwrap();
    let started = Instant::now();
    for _ in 0..turns {
        let ctx = RunContext::new("bench", "fake/m");
        runner
            .run_turn(registry.clone(), &ctx, &[], "echo hi")
            .await
            .unwrap();
    }
    let turn_time = started.elapsed() / turns;

    // The server's own time: the same two exchanges with a bare HTTP client.
    for _ in 0..turns {
        fake.push(Reply::sse(tool_call.clone()));
        fake.push(Reply::sse(answer.clone()));
    }
    let http = reqwest::Client::new();
    let started = Instant::now();
    for _ in 0..turns * 2 {
        let resp = http
            .post(format!("{}/chat/completions", fake.url()))
            .json(&json!({"model": "m"}))
            .send()
            .await
            .unwrap();
        resp.bytes().await.unwrap();
    }
    let server_time = started.elapsed() / turns;
    println!(
        "full turn  {:>8.3} ms per turn · bare HTTP for the same exchanges {:>8.3} ms · host overhead {:>8.3} ms per turn (target ≤ 0.5 ms)",
        turn_time.as_secs_f64() * 1e3,
        server_time.as_secs_f64() * 1e3,
        (turn_time.as_secs_f64() - server_time.as_secs_f64()) * 1e3
    );
}
