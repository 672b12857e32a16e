//! The gateway beside what a user would call instead, in one run against one
//! fake OpenAI provider on loopback (each turn: one streamed model reply,
//! stored in a session):
//! - a bare HTTP client streaming the same reply from the provider;
//! - the bare runner (`AgentHost::run_turn` in process);
//! - the gateway over loopback (`POST /v1/chat/completions`, not streamed).
//!
//! The runner once more with `sessions.fsync` off, to show what the one
//! fsync per turn costs on this disk, and once on a current-thread runtime.
//!
//! Then one turn by saved history (0, 100 and 1,000 messages) against a
//! bare client sending the same body, and the compaction check's token
//! estimate of those histories (shared messages against serializing each).
//!
//! Then 100 sessions at once through a gateway in a process of its own
//! (this binary again): throughput, p50/p99, and that process's resident
//! memory under the load.
//!
//! Run: `cargo bench -p clawhost-tests --bench gateway` (a bench binary;
//! BENCHMARKS.md records one run).

use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_agent_core::RunContext;
use clawhost_gateway::Gateway;
use clawhost_runner::{AgentHost, TurnRequest};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::gateway::summary;
use clawhost_tests::wire;
use serde_json::{json, Value};

const SEQUENTIAL: usize = 300;
const SESSIONS: usize = 100;
const TURNS_EACH: usize = 5;
/// Rounds of the by-history measure; each round times one turn per history.
const HISTORY_ROUNDS: usize = 30;
/// Saved messages before the timed turn.
const HISTORIES: [usize; 3] = [0, 100, 1000];

/// A `<field>: <n> kB` line of a process's /proc status, in MiB.
fn status_mib_of(pid: u32, field: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
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

/// The environment variable that makes this binary the gateway process.
const CHILD: &str = "CLAWHOST_BENCH_GATEWAY_CONFIG";

/// A config pointing at `fake`, its sessions under `dir/<name>`.
fn write_config(
    fake: &FakeProvider,
    dir: &std::path::Path,
    name: &str,
    fsync: bool,
) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(
        &path,
        json!({
            "models": {"providers": {"fake": {
                "api": "openai-completions", "baseUrl": fake.url(), "models": [{"id": "m"}]}}},
            "agents": {"defaults": {"model": "fake/m"}},
            "sessions": {"dir": dir.join(name), "fsync": fsync},
        })
        .to_string(),
    )
    .unwrap();
    path
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if let Ok(config) = std::env::var(CHILD) {
        return clawhost_tests::gateway::serve_process(std::path::Path::new(&config)).await;
    }
    let fake = FakeProvider::start().await;
    for _ in 0..(SEQUENTIAL * 5 + SESSIONS * TURNS_EACH + HISTORY_ROUNDS * 9 + 50) {
        fake.push(reply());
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(&fake, dir.path(), "main", true);
    let (host, _) = AgentHost::start(clawhost_config::Config::load(&path).unwrap(), None)
        .await
        .unwrap();
    let unsynced = write_config(&fake, dir.path(), "unsynced", false);
    let (unsynced, _) = AgentHost::start(clawhost_config::Config::load(&unsynced).unwrap(), None)
        .await
        .unwrap();
    let current = current_thread_runner(write_config(&fake, dir.path(), "current", true));
    let gateway = Gateway::new(Arc::new(host)).unwrap();
    let listener = gateway.listen(Some("127.0.0.1:0")).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(gateway.clone().serve(listener, std::future::pending()));
    let http = reqwest::Client::new();
    let host = gateway.host().clone();

    // Warm every path once.
    bare_client(&http, &fake).await;
    bare_runner(&host, None).await;
    through_gateway(&http, addr, None).await;

    // Interleaved, so drift of the machine hits all alike; each in a
    // session of its own that grows by one turn per round.
    let (mut bare, mut runner, mut nosync, mut gw, mut one_thread) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let runner_session = bare_runner(&host, None).await;
    let nosync_session = bare_runner(&unsynced, None).await;
    let gw_session = through_gateway(&http, addr, None).await;
    for _ in 0..SEQUENTIAL {
        let t = Instant::now();
        bare_client(&http, &fake).await;
        bare.push(t.elapsed());
        let t = Instant::now();
        bare_runner(&host, Some(&runner_session)).await;
        runner.push(t.elapsed());
        let t = Instant::now();
        bare_runner(&unsynced, Some(&nosync_session)).await;
        nosync.push(t.elapsed());
        let t = Instant::now();
        through_gateway(&http, addr, Some(&gw_session)).await;
        gw.push(t.elapsed());
        let (done, took) = tokio::sync::oneshot::channel();
        current.send(done).unwrap();
        one_thread.push(took.await.unwrap());
    }
    println!("== one turn at a time ({SEQUENTIAL} turns each, interleaved)");
    let (early, late) = (&runner[..30], &runner[SEQUENTIAL - 30..]);
    let median = |xs: &[Duration]| {
        let mut v = xs.to_vec();
        v.sort();
        v[v.len() / 2]
    };
    println!(
        "bare runner by history: turns 1-30 (≤ 120 entries) p50 {:.2?}; turns {}-{} (≥ {} entries) p50 {:.2?}",
        median(early),
        SEQUENTIAL - 29,
        SEQUENTIAL,
        (SEQUENTIAL - 30) * 4,
        median(late)
    );
    let b = summary("bare HTTP client → fake provider", bare);
    let r = summary("bare runner (AgentHost::run_turn)", runner);
    summary("bare runner, sessions.fsync off", nosync);
    summary("bare runner on a current-thread runtime", one_thread);
    let g = summary("gateway over loopback (chat completions)", gw);
    println!(
        "runner above the bare client: {:.2?}; gateway above the runner: {:.2?}",
        r.saturating_sub(b),
        g.saturating_sub(r)
    );

    println!(
        "== one turn by saved history ({HISTORY_ROUNDS} rounds: a fresh session of each size, its second turn timed, interleaved with the bare client)"
    );
    let mut by_history: Vec<Vec<Duration>> = vec![Vec::new(); HISTORIES.len()];
    let mut bare_by_history: Vec<Vec<Duration>> = vec![Vec::new(); HISTORIES.len()];
    for _ in 0..HISTORY_ROUNDS {
        for (i, n) in HISTORIES.into_iter().enumerate() {
            let text = |k: usize| format!("message {k}: {}", "words of a saved turn ".repeat(4));
            let history: Vec<clawhost_agent_core::Message> = (0..n)
                .map(|k| {
                    if k % 2 == 0 {
                        clawhost_agent_core::Message::user(text(k))
                    } else {
                        clawhost_agent_core::Message::assistant(text(k))
                    }
                })
                .collect();
            let session = host.create_session("main", &history).await.unwrap();
            // The first turn opens the saved transcript; time the next one.
            bare_runner(&host, Some(&session)).await;
            let t = Instant::now();
            bare_runner(&host, Some(&session)).await;
            by_history[i].push(t.elapsed());
            // The same exchange from a bare client: the body the runner
            // sent (the history, the first turn, the question), built
            // before the clock starts and serialized after.
            let mut messages: Vec<Value> = (0..n)
                .map(|k| json!({"role": if k % 2 == 0 { "user" } else { "assistant" }, "content": text(k)}))
                .collect();
            messages.push(json!({"role": "user", "content": "question"}));
            messages.push(json!({"role": "assistant", "content": "the answer"}));
            messages.push(json!({"role": "user", "content": "question"}));
            let body = json!({"model": "m", "stream": true, "messages": messages});
            let t = Instant::now();
            bare_client_sending(&http, &fake, &body).await;
            bare_by_history[i].push(t.elapsed());
        }
    }
    for ((n, times), bare) in HISTORIES.into_iter().zip(by_history).zip(bare_by_history) {
        let b = summary(
            &format!("bare HTTP client, the same {n}-message body"),
            bare,
        );
        let t = summary(&format!("bare runner, {n} saved messages"), times);
        println!("  above the bare client: {:.2?}", t.saturating_sub(b));
    }
    token_estimate_by_history();

    println!("== {SESSIONS} sessions at once, {TURNS_EACH} turns each, through a gateway process");
    let config = write_config(&fake, dir.path(), "child", true);
    let mut gateway_process = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD, &config)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = gateway_process.id().unwrap();
    let mut out = tokio::io::BufReader::new(gateway_process.stdout.take().unwrap());
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
        .await
        .unwrap();
    let addr: std::net::SocketAddr = line.trim().parse().unwrap();
    through_gateway(&http, addr, None).await;
    let rss_idle = status_mib_of(pid, "VmRSS:");
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
        "gateway process resident memory: {rss_idle:.1} MiB after one turn, {:.1} MiB after the load, peak {:.1} MiB",
        status_mib_of(pid, "VmRSS:"),
        status_mib_of(pid, "VmHWM:")
    );
    gateway_process.kill().await.unwrap();
}

/// The compaction check's token estimate of a saved history, each turn:
/// over shared messages (each one's estimate kept) against the same
/// messages serialized to a byte counter every time.
fn token_estimate_by_history() {
    use clawhost_agent_core::{estimate_tokens, Message, SharedMessage};
    for n in HISTORIES {
        let plain: Vec<Message> = (0..n)
            .map(|k| {
                Message::user(format!(
                    "message {k}: {}",
                    "words of a saved turn ".repeat(4)
                ))
            })
            .collect();
        let shared: Vec<SharedMessage> = plain.iter().cloned().map(SharedMessage::from).collect();
        // The first turn of a session estimates each message once.
        let total = estimate_tokens(&shared);
        let time = |f: &dyn Fn() -> u64| {
            let mut times: Vec<Duration> = (0..200)
                .map(|_| {
                    let t = Instant::now();
                    assert_eq!(std::hint::black_box(f()), total);
                    t.elapsed()
                })
                .collect();
            times.sort();
            times[times.len() / 2]
        };
        println!(
            "token estimate of {n} saved messages: shared {:.2?}, serialized each time {:.2?}",
            time(&|| estimate_tokens(&shared)),
            time(&|| estimate_tokens(&plain))
        );
    }
}

/// The runner on a current-thread runtime of a thread of its own (its HTTP
/// connection's task runs on that thread too): each request runs one turn
/// there and answers the time it took, measured on that thread.
fn current_thread_runner(
    config: std::path::PathBuf,
) -> tokio::sync::mpsc::UnboundedSender<tokio::sync::oneshot::Sender<Duration>> {
    let (tx, mut rx) =
        tokio::sync::mpsc::unbounded_channel::<tokio::sync::oneshot::Sender<Duration>>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let (host, _) = AgentHost::start(clawhost_config::Config::load(&config).unwrap(), None)
                .await
                .unwrap();
            let session = bare_runner(&host, None).await;
            while let Some(done) = rx.recv().await {
                let t = Instant::now();
                bare_runner(&host, Some(&session)).await;
                let _ = done.send(t.elapsed());
            }
        });
    });
    tx
}

async fn bare_client(http: &reqwest::Client, fake: &FakeProvider) {
    let body = json!({"model": "m", "stream": true,
                      "messages": [{"role": "user", "content": "question"}]});
    bare_client_sending(http, fake, &body).await;
}

/// The bare client posting `body` (serialized in the timed path, as a client
/// would) and reading the streamed reply to its end.
async fn bare_client_sending(http: &reqwest::Client, fake: &FakeProvider, body: &Value) {
    let mut r = http
        .post(format!("{}/chat/completions", fake.url()))
        .json(body)
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
        images: Vec::new(),
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
