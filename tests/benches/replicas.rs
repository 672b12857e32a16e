//! Gateway replicas over PostgreSQL beside the file store, in one run
//! against one fake OpenAI provider on loopback (each turn: one streamed
//! model reply, stored in its session), every gateway a process of its own
//! (this binary again), the database a throwaway cluster of Debian's
//! PostgreSQL (fsync and synchronous commit on, as the file store fsyncs):
//! - one turn at a time, continuing one session: the file store's gateway
//!   and a PostgreSQL gateway, interleaved;
//! - many sessions at once: one file-store gateway, one PostgreSQL replica,
//!   two PostgreSQL replicas with each session's turns alternating between
//!   them (a load balancer without affinity), and with each session kept
//!   on one of them (with affinity). The CPU each turn took, in the
//!   gateway processes and in PostgreSQL's, is printed beside.
//!
//! Run: `cargo bench -p clawhost-tests --bench replicas` (BENCHMARKS.md
//! records one run).

use std::net::SocketAddr;
use std::time::Instant;

use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::gateway::summary;
use clawhost_tests::postgres::Postgres;
use clawhost_tests::wire;
use serde_json::json;

const SEQUENTIAL: usize = 200;
const SESSIONS: usize = 50;
const TURNS_EACH: usize = 6;

/// The environment variable that makes this binary a gateway process.
const CHILD: &str = "CLAWHOST_BENCH_REPLICA_CONFIG";

/// Start a gateway process on `sessions`; its address.
async fn replica(
    fake: &FakeProvider,
    dir: &std::path::Path,
    name: &str,
    sessions: serde_json::Value,
) -> (tokio::process::Child, SocketAddr) {
    let config = dir.join(format!("{name}.json"));
    std::fs::write(
        &config,
        json!({
            "models": {"providers": {"fake": {
                "api": "openai-completions", "baseUrl": fake.url(), "models": [{"id": "m"}]}}},
            "agents": {"defaults": {"model": "fake/m"}},
            "sessions": sessions,
        })
        .to_string(),
    )
    .unwrap();
    let mut process = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD, &config)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(process.stdout.take().unwrap());
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
        .await
        .unwrap();
    (process, line.trim().parse().unwrap())
}

/// CPU time (user + system, in clock ticks of 10 ms) of the processes
/// whose command name is `name`, or of the one process `pid`.
fn cpu_ticks(name: Option<&str>, pid: Option<u32>) -> u64 {
    let stat = |p: &str| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
    let ticks = |line: &str| -> u64 {
        // After the `(comm)` field: fields 14 and 15 are utime and stime.
        let rest = line.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
        let f: Vec<&str> = rest.split_whitespace().collect();
        f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
    };
    if let Some(pid) = pid {
        return ticks(&stat(&pid.to_string()));
    }
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let p = entry.file_name().to_string_lossy().into_owned();
        if !p.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let line = stat(&p);
        if line.contains(&format!("({})", name.unwrap_or_default())) {
            total += ticks(&line);
        }
    }
    total
}

/// One turn through `addr` (a new session when `session` is `None`).
async fn turn(http: &reqwest::Client, addr: SocketAddr, session: Option<&str>) -> String {
    let mut request = http
        .post(format!("http://{addr}/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "question"}]}));
    if let Some(s) = session {
        request = request.header("x-clawhost-session", s);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["x-clawhost-session"]
        .to_str()
        .unwrap()
        .to_string();
    response.bytes().await.unwrap();
    session
}

/// `SESSIONS` sessions at once, `TURNS_EACH` turns each, session `i`'s
/// turn `k` going to `replicas[(i + k) % n]` when `alternate`, else always
/// to `replicas[i % n]` (a load balancer with session affinity): turns per
/// second, the latencies, and the CPU each turn took.
async fn load(
    http: &reqwest::Client,
    replicas: &[(SocketAddr, u32)],
    alternate: bool,
    name: &str,
) -> f64 {
    let cpu = |replicas: &[(SocketAddr, u32)]| {
        let own: u64 = replicas.iter().map(|r| cpu_ticks(None, Some(r.1))).sum();
        (own, cpu_ticks(Some("postgres"), None))
    };
    let before = cpu(replicas);
    let replicas_with_pids = replicas.to_vec();
    let replicas: Vec<SocketAddr> = replicas.iter().map(|r| r.0).collect();
    let started = Instant::now();
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|i| {
            let (http, replicas) = (http.clone(), replicas.to_vec());
            tokio::spawn(async move {
                let mut times = Vec::new();
                let mut session: Option<String> = None;
                for k in 0..TURNS_EACH {
                    let at = replicas[(i + if alternate { k } else { 0 }) % replicas.len()];
                    let t = Instant::now();
                    session = Some(turn(&http, at, session.as_deref()).await);
                    times.push(t.elapsed());
                }
                times
            })
        })
        .collect();
    let mut times = Vec::new();
    for t in tasks {
        times.extend(t.await.unwrap());
    }
    let took = started.elapsed();
    let turns = times.len() as f64;
    let rate = turns / took.as_secs_f64();
    print!("{name:<40} {rate:>7.0} turns/s   ");
    summary("", times);
    let after = cpu(&replicas_with_pids);
    println!(
        "  CPU per turn: gateway process(es) {:.0} µs, PostgreSQL {:.0} µs",
        (after.0 - before.0) as f64 * 10_000.0 / turns,
        (after.1 - before.1) as f64 * 10_000.0 / turns
    );
    rate
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if let Ok(config) = std::env::var(CHILD) {
        return clawhost_tests::gateway::serve_process(std::path::Path::new(&config)).await;
    }
    let pg = Postgres::start();
    let fake = FakeProvider::start().await;
    for _ in 0..(SEQUENTIAL * 2 + SESSIONS * TURNS_EACH * 4 + 50) {
        fake.push(Reply::sse(wire::chat_text(&["the ", "answer"], 12, 2)));
    }
    let dir = tempfile::tempdir().unwrap();
    let files = json!({"dir": dir.path().join("sessions"), "fsync": true});
    let postgres = json!({"store": pg.url()});
    let (f, file_gw) = replica(&fake, dir.path(), "files", files).await;
    let (a, pg_a) = replica(&fake, dir.path(), "pg-a", postgres.clone()).await;
    let (b, pg_b) = replica(&fake, dir.path(), "pg-b", postgres).await;
    let pid = |c: &tokio::process::Child| c.id().unwrap();
    let (f_pid, a_pid, b_pid) = (pid(&f), pid(&a), pid(&b));
    let http = reqwest::Client::new();

    println!("== one turn at a time, one session each ({SEQUENTIAL} turns, interleaved)");
    let file_session = turn(&http, file_gw, None).await;
    let pg_session = turn(&http, pg_a, None).await;
    let (mut by_file, mut by_pg) = (Vec::new(), Vec::new());
    for _ in 0..SEQUENTIAL {
        let t = Instant::now();
        turn(&http, file_gw, Some(&file_session)).await;
        by_file.push(t.elapsed());
        let t = Instant::now();
        turn(&http, pg_a, Some(&pg_session)).await;
        by_pg.push(t.elapsed());
    }
    let f = summary("gateway, file store (fsync)", by_file);
    let p = summary("gateway, PostgreSQL store", by_pg);
    println!(
        "PostgreSQL / files per turn: {:.2}×",
        p.as_secs_f64() / f.as_secs_f64()
    );

    println!("== {SESSIONS} sessions at once, {TURNS_EACH} turns each");
    let one_file = load(&http, &[(file_gw, f_pid)], false, "1 gateway, file store").await;
    let one = load(&http, &[(pg_a, a_pid)], false, "1 replica, PostgreSQL").await;
    let both = [(pg_a, a_pid), (pg_b, b_pid)];
    let two = load(&http, &both, true, "2 replicas, PostgreSQL (alternating)").await;
    load(
        &http,
        &both,
        false,
        "2 replicas, PostgreSQL (session affinity)",
    )
    .await;
    println!(
        "PostgreSQL 1 replica / files: {:.2}×; 2 replicas / 1: {:.2}×",
        one / one_file,
        two / one
    );
}
