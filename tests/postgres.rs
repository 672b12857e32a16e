//! Scale-out over PostgreSQL: `clawhost gateway` replicas (separate
//! processes of the installed binary) sharing one throwaway cluster of
//! Debian's `postgresql` on loopback. One conversation alternates between
//! replicas; concurrent turns of one session are serialized; an approval is
//! asked on one replica and answered through the other; a replica killed
//! mid-turn loses nothing committed; the database restarted mid-run means
//! 503 and then recovery; bad URLs, passwords and newer schemas are refused
//! at start with nothing written; sessions move between the files and
//! PostgreSQL with `sessions export|import`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::gateway::config_json;
use clawhost_tests::postgres::Postgres;
use clawhost_tests::{clawhost_bin, wire};
use serde_json::{json, Value};

/// A `clawhost gateway` process.
struct Replica {
    child: tokio::process::Child,
    port: u16,
    log: PathBuf,
}

impl Replica {
    /// Start `clawhost --config <config> gateway` on a free port, with the
    /// database password and the token in the environment; wait until
    /// `/readyz` says ready.
    async fn start(config: &Path, name: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = config.with_file_name(format!("{name}.log"));
        let child = tokio::process::Command::new(clawhost_bin())
            .arg("--config")
            .arg(config)
            .args(["gateway", "--bind", &format!("127.0.0.1:{port}")])
            .env("PGPASSWORD", clawhost_tests::postgres::PASSWORD)
            .env("CLAWHOST_GATEWAY_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let replica = Self { child, port, log };
        let http = http();
        for _ in 0..300 {
            if let Ok(r) = http.get(replica.url("/readyz")).send().await {
                if r.status() == 200 {
                    return replica;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "replica {name} did not get ready: {}",
            std::fs::read_to_string(&replica.log).unwrap_or_default()
        );
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `kill -9`.
    async fn kill(mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }
}

/// The gateway token of the README's config.
const TOKEN: &str = "t0ken-for-replicas";

/// A client that sends [`TOKEN`].
fn http() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// The config of every replica: the README's (its store pointed at the
/// test's cluster), the fake model, and policy-guard asking before `echo`.
fn replica_config(fake: &FakeProvider, dir: &Path, pg: &Postgres) -> PathBuf {
    replica_config_with(fake, dir, pg, json!({}))
}

/// [`replica_config`] with more `sessions` keys.
fn replica_config_with(
    fake: &FakeProvider,
    dir: &Path,
    pg: &Postgres,
    more_sessions: Value,
) -> PathBuf {
    let readme = clawhost_tests::agents::readme_config("replicas-config");
    let mut sessions = readme["sessions"].clone();
    let store = sessions["store"].as_str().unwrap().replace(
        "127.0.0.1:5432/clawhost",
        &format!("127.0.0.1:{}/postgres", pg.port),
    );
    sessions["store"] = json!(store);
    sessions["dir"] = json!(dir.join("never-written"));
    for (k, v) in more_sessions.as_object().unwrap() {
        sessions[k] = v.clone();
    }
    let config = config_json(
        fake,
        dir,
        json!({
            "sessions": sessions,
            "gateway": readme["gateway"],
            "plugins": {
                "paths": [clawhost_tests::plugins_dir().join("policy-guard")],
                "cacheDir": clawhost_tests::cache_dir(),
                "cacheKeyFile": clawhost_tests::cache_key_file(),
                "entries": {"policy-guard": {"config": {"approveTools": ["echo"]}}}
            }
        }),
    );
    let path = dir.join("clawhost.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// A fresh cluster, the fake model, and the replicas' config in a
/// temporary directory.
async fn cluster() -> (Postgres, FakeProvider, tempfile::TempDir, PathBuf) {
    let pg = Postgres::start();
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = replica_config(&fake, dir.path(), &pg);
    (pg, fake, dir, config)
}

/// One chat-completions turn; the session it ran in and the answer.
async fn turn(url: &str, session: Option<&str>, text: &str) -> (String, String) {
    let mut request = http()
        .post(url)
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": text}]}));
    if let Some(s) = session {
        request = request.header("x-clawhost-session", s);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("x-clawhost-session")
        .map(|v| v.to_str().unwrap().to_string());
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    (
        session.unwrap(),
        body["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

/// A session's entries as a replica serves them.
async fn entries(replica: &Replica, session: &str) -> Vec<Value> {
    let body: Value = http()
        .get(replica.url(&format!("/v1/sessions/main/{session}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["entries"].as_array().unwrap().clone()
}

/// The texts of a session's user and assistant messages, in order; and
/// that every entry follows the one before it (one branch, no fork).
fn conversation(entries: &[Value]) -> Vec<String> {
    for pair in entries.windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "one linear branch");
    }
    entries
        .iter()
        .filter(|e| e["type"] == "message")
        .map(|e| {
            let m = &e["message"];
            let text = m["text"].as_str().or(m["content"].as_str()).unwrap_or("");
            format!("{}: {text}", m["role"].as_str().unwrap_or("?"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_conversation_alternates_between_two_replicas_and_its_turns_are_serialized() {
    let (_pg, fake, _dir, config) = cluster().await;
    let (a, b) = (
        Replica::start(&config, "a").await,
        Replica::start(&config, "b").await,
    );
    let (chat_a, chat_b) = (a.url("/v1/chat/completions"), b.url("/v1/chat/completions"));

    fake.push(Reply::sse(wire::chat_text(&["one"], 1, 1)));
    let (session, answer) = turn(&chat_a, None, "first").await;
    assert_eq!(answer, "one");
    fake.push(Reply::sse(wire::chat_text(&["two"], 1, 1)));
    assert_eq!(turn(&chat_b, Some(&session), "second").await.1, "two");
    // Replica B's model saw the turn replica A ran.
    let seen = fake.requests().last().unwrap().body.to_string();
    assert!(seen.contains("first") && seen.contains("one"), "{seen}");

    // Two turns of the session at once, one on each replica: the first one
    // holds its answer until the second is sent.
    let gate = Arc::new(tokio::sync::Notify::new());
    fake.push(Reply::Held(
        Box::new(Reply::sse(wire::chat_text(&["three"], 1, 1))),
        gate.clone(),
    ));
    fake.push(Reply::sse(wire::chat_text(&["four"], 1, 1)));
    let s = session.clone();
    let first = tokio::spawn(async move { turn(&chat_a, Some(&s), "third").await });
    while fake.requests().len() < 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let s = session.clone();
    let second = tokio::spawn(async move { turn(&chat_b, Some(&s), "fourth").await });
    // The second waits for the session's lane: its model is not asked.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        fake.requests().len(),
        3,
        "the second turn waits for the first"
    );
    gate.notify_one();
    assert_eq!(first.await.unwrap().1, "three");
    assert_eq!(second.await.unwrap().1, "four");
    let last = fake.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("three"),
        "the second turn saw the first: {last}"
    );

    for replica in [&a, &b] {
        assert_eq!(
            conversation(&entries(replica, &session).await),
            [
                "user: first",
                "assistant: one",
                "user: second",
                "assistant: two",
                "user: third",
                "assistant: three",
                "user: fourth",
                "assistant: four"
            ]
        );
    }
    assert!(!config.with_file_name("never-written").exists());
    a.kill().await;
    b.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_on_one_replica_is_answered_through_the_other() {
    let (pg, fake, _dir, config) = cluster().await;
    let (a, b) = (
        Replica::start(&config, "a").await,
        Replica::start(&config, "b").await,
    );
    fake.push(Reply::sse(wire::chat_tool_call(
        "c1",
        "echo",
        &["{\"text\":\"approved words\"}"],
    )));
    fake.push(Reply::sse(wire::chat_tool_call(
        "c2",
        "echo",
        &["{\"text\":\"second words\"}"],
    )));
    fake.push(Reply::sse(wire::chat_text(&["all done"], 1, 1)));
    let http = http();
    let mut run = http
        .post(a.url("/v1/runs"))
        .json(&json!({"message": "go", "approvals": "client"}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while !seen.contains("event: approval_request") {
        let chunk = run.chunk().await.unwrap().expect("the run streams on");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let at = seen.find("\"id\":\"appr-").unwrap() + 6;
    let id = seen[at..at + seen[at..].find('"').unwrap()].to_string();
    let answer = |decision: &'static str| {
        http.post(b.url(&format!("/v1/approvals/{id}")))
            .json(&json!({"decision": decision}))
            .send()
    };
    assert_eq!(answer("allow-once").await.unwrap().status(), 200);
    // Answered once: not again, through either replica.
    assert_eq!(answer("deny").await.unwrap().status(), 404);
    let on_a = http
        .post(a.url(&format!("/v1/approvals/{id}")))
        .json(&json!({"decision": "deny"}))
        .send()
        .await
        .unwrap();
    assert_eq!(on_a.status(), 404);
    // The second request is answered on A itself; then B finds it answered.
    while seen.matches("event: approval_request").count() < 2 {
        let chunk = run.chunk().await.unwrap().expect("the run streams on");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let at = seen.rfind("\"id\":\"appr-").unwrap() + 6;
    let second = seen[at..at + seen[at..].find('"').unwrap()].to_string();
    assert_ne!(second, id);
    let answer_on = |replica: &Replica, decision: &'static str| {
        http.post(replica.url(&format!("/v1/approvals/{second}")))
            .json(&json!({"decision": decision}))
            .send()
    };
    assert_eq!(answer_on(&a, "allow-once").await.unwrap().status(), 200);
    assert_eq!(answer_on(&b, "deny").await.unwrap().status(), 404);
    while !seen.contains("event: turn_end") {
        let chunk = run.chunk().await.unwrap().expect("the run ends");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("approved words"), "the tool ran: {seen}");
    assert!(seen.contains("second words"), "the second call ran: {seen}");
    assert!(seen.contains("all done"), "{seen}");
    // Answered requests are withdrawn (by a statement of their own).
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = pg
            .query("SELECT count(*) FROM clawhost_approvals")
            .await
            .unwrap();
        if rows == [Some("0".to_string())] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        rows,
        [Some("0".to_string())],
        "answered requests are withdrawn"
    );
    a.kill().await;
    b.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_turn_loses_nothing_committed_and_the_other_takes_the_session() {
    let (_pg, fake, _dir, config) = cluster().await;
    let (a, b) = (
        Replica::start(&config, "a").await,
        Replica::start(&config, "b").await,
    );
    fake.push(Reply::sse(wire::chat_text(&["kept"], 1, 1)));
    let (session, _) = turn(&a.url("/v1/chat/completions"), None, "before").await;
    // The next turn on A stalls mid-answer; A dies holding the lane.
    fake.push(Reply::sse_stalling(
        wire::chat_text(&["never ", "ends"], 1, 1),
        2,
    ));
    let url = a.url("/v1/chat/completions");
    let s = session.clone();
    let stalled = tokio::spawn(async move {
        http()
            .post(url)
            .header("x-clawhost-session", s)
            .json(&json!({"model": "main", "messages": [{"role": "user", "content": "lost"}]}))
            .send()
            .await
    });
    while fake.requests().len() < 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.kill().await;
    assert!(
        stalled.await.unwrap().is_err(),
        "the killed replica answers nothing"
    );
    assert_eq!(
        conversation(&entries(&b, &session).await),
        ["user: before", "assistant: kept"]
    );
    fake.push(Reply::sse(wire::chat_text(&["after"], 1, 1)));
    let next = tokio::time::timeout(
        Duration::from_secs(20),
        turn(&b.url("/v1/chat/completions"), Some(&session), "again"),
    )
    .await
    .expect("the dead replica's lane is released");
    assert_eq!(next.1, "after");
    assert_eq!(
        conversation(&entries(&b, &session).await),
        [
            "user: before",
            "assistant: kept",
            "user: again",
            "assistant: after"
        ]
    );
    b.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_restarted_mid_run_means_503_then_recovery() {
    let (mut pg, fake, _dir, config) = cluster().await;
    let a = Replica::start(&config, "a").await;
    let chat = a.url("/v1/chat/completions");
    fake.push(Reply::sse(wire::chat_text(&["stored"], 1, 1)));
    let (session, _) = turn(&chat, None, "before the restart").await;

    pg.stop();
    let http = http();
    let ready = http.get(a.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["store"]["ready"], false, "{ready}");
    for named in [None, Some(session.as_str())] {
        let mut request = http
            .post(&chat)
            .json(&json!({"model": "main", "messages": [{"role": "user", "content": "down"}]}));
        if let Some(s) = named {
            request = request.header("x-clawhost-session", s);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 503);
        let body: Value = response.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("session store is unavailable"),
            "{message}"
        );
    }

    pg.run();
    let ready = http.get(a.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    fake.push(Reply::sse(wire::chat_text(&["back"], 1, 1)));
    assert_eq!(turn(&chat, Some(&session), "after").await.1, "back");
    assert_eq!(
        conversation(&entries(&a, &session).await),
        [
            "user: before the restart",
            "assistant: stored",
            "user: after",
            "assistant: back"
        ]
    );
    a.kill().await;
}

/// `clawhost --config <config> <args>` with `stdin`; (status, stdout, stderr).
async fn clawhost(config: &Path, args: &[&str], stdin: &[u8]) -> (bool, String, String) {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(clawhost_bin())
        .arg("--config")
        .arg(config)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_url_password_or_newer_schema_is_refused_at_start_with_nothing_written() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("clawhost.json");
    let sessions = dir.path().join("sessions");
    let refused = |store: String| {
        std::fs::write(
            &config,
            json!({"sessions": {"store": store, "dir": &sessions}}).to_string(),
        )
        .unwrap();
        async { clawhost(&config, &["sessions", "list"], b"").await }
    };
    let wrong_password = pg
        .url()
        .replace(clawhost_tests::postgres::PASSWORD, "wrong");
    for (store, says) in [
        (wrong_password, "password authentication failed"),
        ("mysql://db/x".to_string(), "must be a postgres:// URL"),
        (
            "postgres://clawhost@127.0.0.1:1/db".to_string(),
            "connecting to postgres://clawhost@127.0.0.1:1/db",
        ),
    ] {
        let (ok, _, stderr) = refused(store).await;
        assert!(!ok && stderr.contains(says), "{says}: {stderr}");
        assert!(
            !stderr.contains("wrong"),
            "no password in messages: {stderr}"
        );
    }
    // `doctor` says so too (the last config: nothing listens on port 1).
    let (ok, out, err) = clawhost(&config, &["doctor"], b"").await;
    let said = format!("{out}{err}");
    assert!(
        !ok && said.contains("connecting to postgres://clawhost@127.0.0.1:1/db"),
        "{said}"
    );
    assert!(!sessions.exists());
    let tables = pg
        .query("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'clawhost%'")
        .await
        .unwrap();
    assert_eq!(tables, [Some("0".to_string())], "nothing written");

    // A schema from a newer clawhost: refused, and left as it is.
    let (ok, _, stderr) = refused(pg.url()).await;
    assert!(ok, "{stderr}");
    let (_, out, _) = clawhost(&config, &["doctor"], b"").await;
    assert!(out.contains("clawhost schema version 1"), "{out}");
    pg.query("INSERT INTO clawhost_schema (version) VALUES (99)")
        .await
        .unwrap();
    let (ok, _, stderr) = refused(pg.url()).await;
    assert!(
        !ok && stderr.contains("schema is version 99, newer than this build's"),
        "{stderr}"
    );
    let versions = pg
        .query("SELECT max(version) FROM clawhost_schema")
        .await
        .unwrap();
    assert_eq!(versions, [Some("99".to_string())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_is_not_ours_is_not_served() {
    let (_pg, fake, _dir, config) = cluster().await;
    let a = Replica::start(&config, "a").await;
    fake.push(Reply::sse(wire::chat_text(&["mine"], 1, 1)));
    let (session, _) = turn(&a.url("/v1/chat/completions"), None, "hello").await;
    let http = http();
    for (path, status) in [
        (format!("/v1/sessions/other/{session}"), 404),
        ("/v1/sessions/main/no-such-session".to_string(), 404),
        ("/v1/sessions/main/bad%20id".to_string(), 400),
    ] {
        let got = http.get(a.url(&path)).send().await.unwrap().status();
        assert_eq!(got, status, "{path}");
    }
    for (named, status) in [("1-000000", 404), ("../etc", 400)] {
        let got = http
            .post(a.url("/v1/chat/completions"))
            .header("x-clawhost-session", named)
            .json(&json!({"model": "main", "messages": [{"role": "user", "content": "x"}]}))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(got, status, "{named}");
    }
    a.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_move_from_the_files_to_postgres_and_back_without_loss() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files.json");
    std::fs::write(
        &files,
        json!({"sessions": {"dir": dir.path().join("sessions")}}).to_string(),
    )
    .unwrap();
    // Sessions with a tree: a fork, a branch from an earlier entry, a
    // compaction, two agents.
    let store = clawhost_sessions::SessionStore::new(dir.path().join("sessions"));
    for agent in ["main", "helper"] {
        let mut t = store.create(agent, None).unwrap();
        let first = t
            .append_message(clawhost_agent_core::Message::user("hello"))
            .unwrap();
        t.append_message(clawhost_agent_core::Message::assistant("hi"))
            .unwrap();
        t.append(clawhost_sessions::EntryBody::Compaction {
            summary: "greetings".into(),
            first_kept_entry_id: first.clone(),
            tokens_before: 10,
        })
        .unwrap();
        t.branch_from(&first).unwrap();
        t.append_message(clawhost_agent_core::Message::assistant("other branch"))
            .unwrap();
        store.commit(agent, &mut t).unwrap();
        store.fork(agent, t.id(), Some(&first)).unwrap();
    }
    let (ok, exported, stderr) = clawhost(&files, &["sessions", "export"], b"").await;
    assert!(ok && stderr.contains("exported 4 sessions"), "{stderr}");

    let (ok, _, stderr) = clawhost(
        &files,
        &["sessions", "import", "--store", &pg.url()],
        exported.as_bytes(),
    )
    .await;
    assert!(ok && stderr.contains("imported 4 sessions"), "{stderr}");
    assert!(
        !stderr.contains(clawhost_tests::postgres::PASSWORD),
        "{stderr}"
    );
    let (ok, again, _) = clawhost(&files, &["sessions", "export", "--store", &pg.url()], b"").await;
    assert!(ok);
    assert_eq!(again, exported, "the same sessions, entries and order");
    // Imported twice: nothing doubled.
    let (ok, _, stderr) = clawhost(
        &files,
        &["sessions", "import", "--store", &pg.url()],
        exported.as_bytes(),
    )
    .await;
    assert!(ok && stderr.contains("imported 0 sessions") && stderr.contains("4 already there"));
    // The tree reads the same from PostgreSQL.
    let url = pg.url();
    let from_pg = tokio::task::spawn_blocking(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let db = rt
            .block_on(clawhost_sessions_postgres::PostgresBackend::connect(
                &url, 4,
            ))
            .unwrap();
        let pg_store = clawhost_sessions::SessionStore::with_backend(Arc::new(db));
        pg_store
            .list("main")
            .unwrap()
            .iter()
            .map(|row| pg_store.open_read_only("main", &row.id).unwrap().context())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let from_files: Vec<_> = store
        .list("main")
        .unwrap()
        .iter()
        .map(|row| store.open_read_only("main", &row.id).unwrap().context())
        .collect();
    assert_eq!(from_pg, from_files);
    // A stream that is not sessions is refused before anything is written.
    let (ok, _, stderr) = clawhost(
        &files,
        &["sessions", "import"],
        b"{\"id\":\"x\",\"parentId\":null,\"atMs\":1,\"type\":\"message\"}\n",
    )
    .await;
    assert!(!ok && stderr.contains("line 1"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_outside_the_lane_writes_nothing() {
    let pg = Postgres::start();
    let url = pg.url();
    tokio::task::spawn_blocking(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let store = |url: &str| {
            let db = rt
                .block_on(clawhost_sessions_postgres::PostgresBackend::connect(url, 4))
                .unwrap();
            clawhost_sessions::SessionStore::with_backend(Arc::new(db))
        };
        // Two processes' stores; each reads the session, then both write.
        let (one, two) = (store(&url), store(&url));
        let id = one.create("main", None).unwrap().id().to_string();
        let mut first = one.open("main", &id).unwrap();
        let mut second = two.open("main", &id).unwrap();
        first
            .append_message(clawhost_agent_core::Message::user("first"))
            .unwrap();
        one.commit("main", &mut first).unwrap();
        second
            .append_message(clawhost_agent_core::Message::user("second"))
            .unwrap();
        let refused = two.commit("main", &mut second).unwrap_err();
        assert!(
            matches!(refused, clawhost_sessions::SessionError::Conflict { .. }),
            "{refused}"
        );
        let stored = two.open_read_only("main", &id).unwrap();
        assert_eq!(
            stored.context(),
            [clawhost_agent_core::Message::user("first")]
        );
        // Kept open by a turn that failed to commit, it is not reused.
        two.checkin("main", second);
        let again = two.checkout("main", &id).unwrap();
        assert_eq!(again.entries().len(), 1);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_in_flight_do_not_hold_pooled_connections() {
    // A pool of 2 connections, 20 sessions' turns in flight at once: each
    // waits for its model while holding its session's lane.
    let pg = Postgres::start();
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = replica_config_with(&fake, dir.path(), &pg, json!({"pool": 2}));
    let a = Replica::start(&config, "a").await;
    let gate = Arc::new(tokio::sync::Notify::new());
    for i in 0..20 {
        fake.push(Reply::Held(
            Box::new(Reply::sse(wire::chat_text(&[&format!("answer {i}")], 1, 1))),
            gate.clone(),
        ));
    }
    let turns: Vec<_> = (0..20)
        .map(|i| {
            let url = a.url("/v1/chat/completions");
            tokio::spawn(async move { turn(&url, None, &format!("question {i}")).await })
        })
        .collect();
    while fake.requests().len() < 20 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Open the gate once per held reply (a handler between being recorded
    // and waiting gets a stored permit on a later tick).
    let ticker = tokio::spawn(async move {
        loop {
            gate.notify_one();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    for t in turns {
        assert!(t.await.unwrap().1.starts_with("answer "));
    }
    ticker.abort();
    a.kill().await;
}
