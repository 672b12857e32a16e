//! The gateway beside what a user would call instead, in one run against one
//! fake OpenAI provider on loopback (each turn: one streamed model reply,
//! stored in a session):
//! - a bare HTTP client streaming the same reply from the provider;
//! - the bare runner (`AgentHost::run_turn` in process);
//! - the gateway over loopback (`POST /v1/chat/completions`, not streamed).
//!
//! Then 100 sessions at once through the gateway: throughput, p50/p99 and
//! resident memory under that load.
//!
//! Run: `cargo bench -p clawhost-tests --bench gateway` (a bench binary;
//! BENCHMARKS.md records one run).

use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_agent_core::RunContext;
use clawhost_gateway::Gateway;
use clawhost_runner::{AgentHost, TurnRequest};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::wire;
use serde_json::{json, Value};

const SEQUENTIAL: usize = 300;
const SESSIONS: usize = 100;
const TURNS_EACH: usize = 5;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn summary(name: &str, mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    let (p50, p99) = (percentile(&xs, 0.5), percentile(&xs, 0.99));
    println!("{name:<44} p50 {p50:>10.2?}   p99 {p99:>10.2?}");
    p50
}

/// A `<field>: <n> kB` line of /proc/self/status, in MiB.
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

fn reply() -> Reply {
    Reply::sse(wire::chat_text(&["the ", "answer"], 12, 2))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let fake = FakeProvider::start().await;
    for _ in 0..(SEQUENTIAL * 3 + SESSIONS * TURNS_EACH + 50) {
        fake.push(reply());
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clawhost.json");
    std::fs::write(
        &path,
        json!({
            "models": {"providers": {"fake": {
                "api": "openai-completions", "baseUrl": fake.url(), "models": [{"id": "m"}]}}},
            "agents": {"defaults": {"model": "fake/m"}},
            "sessions": {"dir": dir.path().join("sessions")},
        })
        .to_string(),
    )
    .unwrap();
    let rss_before = status_mib("VmRSS:");
    let (host, _) = AgentHost::start(clawhost_config::Config::load(&path).unwrap(), None)
        .await
        .unwrap();
    let gateway = Gateway::new(Arc::new(host));
    let listener = gateway.listen(Some("127.0.0.1:0")).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(gateway.clone().serve(listener, std::future::pending()));
    let http = reqwest::Client::new();
    let host = gateway.host().clone();

    // Warm every path once.
    bare_client(&http, &fake).await;
    bare_runner(&host, None).await;
    through_gateway(&http, addr, None).await;

    // Interleaved, so drift of the machine hits all three alike; each in a
    // session of its own that grows by one turn per round.
    let (mut bare, mut runner, mut gw) = (Vec::new(), Vec::new(), Vec::new());
    let runner_session = bare_runner(&host, None).await;
    let gw_session = through_gateway(&http, addr, None).await;
    for _ in 0..SEQUENTIAL {
        let t = Instant::now();
        bare_client(&http, &fake).await;
        bare.push(t.elapsed());
        let t = Instant::now();
        bare_runner(&host, Some(&runner_session)).await;
        runner.push(t.elapsed());
        let t = Instant::now();
        through_gateway(&http, addr, Some(&gw_session)).await;
        gw.push(t.elapsed());
    }
    println!("== one turn at a time ({SEQUENTIAL} turns each, interleaved)");
    let b = summary("bare HTTP client → fake provider", bare);
    let r = summary("bare runner (AgentHost::run_turn)", runner);
    let g = summary("gateway over loopback (chat completions)", gw);
    println!(
        "runner above the bare client: {:.2?}; gateway above the runner: {:.2?}",
        r.saturating_sub(b),
        g.saturating_sub(r)
    );

    println!("== {SESSIONS} sessions at once, {TURNS_EACH} turns each, through the gateway");
    let started = Instant::now();
    let clients = (0..SESSIONS).map(|_| {
        let http = http.clone();
        tokio::spawn(async move {
            let mut times = Vec::new();
            let mut session = None;
            for _ in 0..TURNS_EACH {
                let t = Instant::now();
                session = Some(through_gateway(&http, addr, session.as_deref()).await);
                times.push(t.elapsed());
            }
            times
        })
    });
    let mut all = Vec::new();
    for c in futures::future::join_all(clients).await {
        all.extend(c.unwrap());
    }
    let wall = started.elapsed();
    let turns = all.len();
    summary("turn latency under load", all);
    println!(
        "throughput: {:.0} turns/s ({turns} turns in {wall:.2?})",
        turns as f64 / wall.as_secs_f64()
    );
    println!(
        "resident memory: {:.1} MiB before the host, {:.1} MiB now, peak {:.1} MiB",
        rss_before,
        status_mib("VmRSS:"),
        status_mib("VmHWM:")
    );
}

async fn bare_client(http: &reqwest::Client, fake: &FakeProvider) {
    let body = json!({"model": "m", "stream": true,
                      "messages": [{"role": "user", "content": "question"}]});
    let mut r = http
        .post(format!("{}/chat/completions", fake.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    while r.chunk().await.unwrap().is_some() {}
}

async fn bare_runner(host: &AgentHost, session: Option<&str>) -> String {
    let ctx = RunContext::new("main", "fake/m");
    let request = TurnRequest {
        agent: "main".into(),
        session: session.map(str::to_string),
        message: "question".into(),
        model: None,
    };
    let reply = host.run_turn(&request, &ctx).await.unwrap();
    assert_eq!(reply.outcome.answer, "the answer");
    reply.session_id
}

async fn through_gateway(
    http: &reqwest::Client,
    addr: std::net::SocketAddr,
    session: Option<&str>,
) -> String {
    let mut r = http
        .post(format!("http://{addr}/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "question"}]}));
    if let Some(s) = session {
        r = r.header("x-clawhost-session", s);
    }
    let body: Value = r.send().await.unwrap().json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"], "the answer",
        "{body}"
    );
    body["session_id"].as_str().unwrap().to_string()
}
