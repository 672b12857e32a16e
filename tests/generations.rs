//! Model runtime generations: whole snapshots, failed builds, runs pinned to theirs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clawhost_agent_core::RunContext;
use clawhost_config::Config;
use clawhost_llm::ModelRuntimes;
use clawhost_runner::AgentHost;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{runner_with, wire};
use serde_json::{json, Value};

fn cfg(v: Value) -> Config {
    Config::from_json_str(&v.to_string(), std::path::Path::new(".")).unwrap()
}

/// Generation `k`: two agents on provider `p{k}`, which lists model `m{k}`.
fn numbered(k: u64) -> Config {
    cfg(json!({
        "models": {"providers": {format!("p{k}"): {"api": "scripted", "models": [{"id": format!("m{k}")}]}}},
        "agents": {"list": [{"id": "a", "model": format!("p{k}/m{k}")}, {"id": "b", "model": format!("p{k}/m{k}")}]}
    }))
}

#[test]
fn concurrent_readers_always_see_one_whole_generation() {
    let runtimes = Arc::new(ModelRuntimes::new());
    runtimes.rebuild(&numbered(0)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(std::sync::Barrier::new(4));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (runtimes, stop, start) = (runtimes.clone(), stop.clone(), start.clone());
            std::thread::spawn(move || {
                let (mut seen, mut last) = (0u64, 0u64);
                start.wait();
                loop {
                    let set = runtimes.snapshot().expect("published");
                    assert!(set.number >= last, "generation numbers never go back");
                    last = set.number;
                    let (a, b) = (&set.agents["a"], &set.agents["b"]);
                    assert_eq!((a.number, b.number), (set.number, set.number));
                    assert!(
                        Arc::ptr_eq(&a.registry, &b.registry),
                        "one registry per generation"
                    );
                    assert_eq!(a.model, b.model);
                    let provider = a.model.split('/').next().unwrap();
                    assert!(
                        a.registry.provider(provider).is_some(),
                        "the agent's model is in its own registry"
                    );
                    assert!(
                        a.catalog.iter().any(|c| c.model_ref == a.model),
                        "and in its own catalog"
                    );
                    seen += 1;
                    if stop.load(Ordering::Relaxed) {
                        break seen;
                    }
                }
            })
        })
        .collect();
    start.wait();
    for k in 1..=200 {
        runtimes.rebuild(&numbered(k)).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(runtimes.snapshot().unwrap().number, 201);
}

#[test]
fn a_failed_build_keeps_the_previous_generation_serving() {
    let runtimes = ModelRuntimes::new();
    let first = runtimes.rebuild(&numbered(7)).unwrap();
    let broken = cfg(json!({"agents": {"list": [{"id": "a", "model": "missing/model"}]}}));
    let err = runtimes.rebuild(&broken).unwrap_err();
    assert_eq!(err.number, 2);
    assert!(
        err.reason.contains("agent `a`") && err.reason.contains("missing"),
        "{err}"
    );
    let served = runtimes.current("a").unwrap();
    assert_eq!(
        (served.number, served.model.as_str()),
        (first.number, "p7/m7")
    );
    assert_eq!(runtimes.last_error(), Some(err));
    let bad_url = cfg(
        json!({"models": {"providers": {"x": {"api": "openai-completions", "baseUrl": "ftp://nope"}}}}),
    );
    assert!(runtimes
        .rebuild(&bad_url)
        .unwrap_err()
        .reason
        .contains("http or https"));
    assert_eq!(runtimes.current("a").unwrap().number, 1);
    let next = runtimes.rebuild(&numbered(8)).unwrap();
    assert_eq!(next.number, 4);
    assert_eq!(runtimes.last_error(), None);
}

#[tokio::test]
async fn reload_publishes_new_generations_and_survives_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clawhost.json");
    let sessions = dir.path().join("sessions");
    let first =
        json!({"agents": {"defaults": {"model": "scripted/demo"}}, "sessions": {"dir": sessions}});
    std::fs::write(&path, first.to_string()).unwrap();
    let seen = clawhost_llm::reload::fingerprint(&path);
    let (host, _) = AgentHost::start(Config::load(&path).unwrap(), Some(path.clone()))
        .await
        .unwrap();
    assert_eq!(host.generation("main").unwrap().number, 1);
    // A file that does not load publishes nothing and says why.
    std::fs::write(&path, "{ not json").unwrap();
    assert_ne!(clawhost_llm::reload::fingerprint(&path), seen);
    let err = host.reload().await.unwrap_err();
    assert!(
        format!("{err:#}").contains("invalid config file"),
        "{err:#}"
    );
    assert_eq!(host.generation("main").unwrap().number, 1);
    // An edit publishes the next generation.
    let edited = json!({"models": {"providers": {"p3": {"api": "scripted", "models": [{"id": "m3"}]}}},
                        "agents": {"defaults": {"model": "p3/m3"}}, "sessions": {"dir": sessions}});
    std::fs::write(&path, edited.to_string()).unwrap();
    let report = host.reload().await.unwrap();
    let published = host.generation("main").unwrap();
    assert_eq!(
        (published.model.as_str(), published.number),
        ("p3/m3", report.generation)
    );
    assert!(published.number > 1);
}

fn pointing_at(fake: &FakeProvider) -> Config {
    cfg(json!({
        "models": {"providers": {"p": {"api": "openai-completions", "baseUrl": fake.url(), "models": [{"id": "m"}]}}},
        "agents": {"defaults": {"model": "p/m"}}
    }))
}

#[tokio::test]
async fn a_run_started_on_generation_n_finishes_on_n() {
    let (a, b) = (FakeProvider::start().await, FakeProvider::start().await);
    let gate = Arc::new(tokio::sync::Notify::new());
    a.push(Reply::Held(
        Box::new(Reply::sse(wire::chat_tool_call(
            "c1",
            "echo",
            &["{\"text\":\"hi\"}"],
        ))),
        gate.clone(),
    ));
    a.push(Reply::sse(wire::chat_text(&["from A"], 1, 1)));
    b.push(Reply::sse(wire::chat_text(&["from B"], 1, 1)));

    let runtimes = Arc::new(ModelRuntimes::new());
    runtimes.rebuild(&pointing_at(&a)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runner = Arc::new(runner_with(clawhost_tests::config(json!({}), dir.path()), &[]).await);

    let generation_n = runtimes.current("main").unwrap();
    let run = {
        let runner = runner.clone();
        tokio::spawn(async move {
            let ctx = RunContext::new("main", "p/m");
            runner
                .run_on_generation(generation_n, &ctx, &[], "echo hi")
                .await
        })
    };
    // The run has sent its first request to A; now publish N+1, pointing at B.
    tokio::time::timeout(FakeProvider::PATIENCE, async {
        while a.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    runtimes.rebuild(&pointing_at(&b)).unwrap();
    assert_eq!(runtimes.current("main").unwrap().number, 2);
    gate.notify_one();
    let out = run.await.unwrap().unwrap();
    assert_eq!(out.answer, "from A");
    assert_eq!((a.requests().len(), b.requests().len()), (2, 0));

    // A new run starts on N+1.
    let ctx = RunContext::new("main", "p/m");
    let out = runner
        .run_on_generation(runtimes.current("main").unwrap(), &ctx, &[], "again")
        .await
        .unwrap();
    assert_eq!(out.answer, "from B");
}
