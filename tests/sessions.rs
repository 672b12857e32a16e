//! Sessions: transcripts on disk, torn-line recovery, forks, lanes, and
//! compaction (threshold and overflow-then-retry) against the fake provider.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use clawhost_agent_core::{
    Message, RunContext, SharedMessage, ToolCallRequest, ToolResultMessage, TurnEvent,
};
use clawhost_config::Config;
use clawhost_llm::ModelRuntimes;
use clawhost_sessions::{EntryBody, SessionError, SessionStore};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, runner_with, wire};
use serde_json::json;

fn tool_pair(id: &str) -> [Message; 2] {
    [
        Message::tool_calls(vec![ToolCallRequest {
            id: id.into(),
            name: "echo".into(),
            arguments: json!({"text": "x"}),
        }]),
        Message::ToolResult(ToolResultMessage {
            call_id: id.into(),
            tool: "echo".into(),
            content: "{\"text\":\"x\"}".into(),
            is_error: false,
            images: Vec::new(),
        }),
    ]
}

#[test]
fn a_transcript_round_trips_and_lists_from_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut t = store.create("main", None).unwrap();
    let id = t.id().to_string();
    let [call, result] = tool_pair("c1");
    let msgs = vec![
        Message::user("hello there"),
        call,
        result,
        Message::assistant("done"),
    ];
    for m in &msgs {
        t.append_message(m.clone()).unwrap();
    }
    store
        .record_runtime(&mut t, "openclaw", "auto-fallback")
        .unwrap();
    store.commit("main", &mut t).unwrap();

    let back = store.open("main", &id).unwrap();
    assert_eq!(back.context(), msgs);
    assert_eq!(back.runtime().as_deref(), Some("openclaw"));
    assert_eq!(back.header().version, 1);
    assert!(!back.header().cwd.is_empty());
    let kinds: Vec<&str> = back
        .entries()
        .iter()
        .map(|e| match e.body {
            EntryBody::Message { .. } => "message",
            EntryBody::ToolCall { .. } => "tool_call",
            EntryBody::ToolResult { .. } => "tool_result",
            EntryBody::Runtime { .. } => "runtime",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["message", "tool_call", "tool_result", "message", "runtime"]
    );
    for pair in back.entries().windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
    }
    let text = std::fs::read_to_string(back.path().unwrap()).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        (header["type"].as_str(), header["id"].as_str()),
        (Some("session"), Some(id.as_str()))
    );

    let listed = store.list("main").unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].title.as_str(),
            listed[0].entries,
            listed[0].runtime.as_deref()
        ),
        ("hello there", 5, Some("openclaw"))
    );
    // A lost index is rebuilt from the transcripts.
    std::fs::remove_file(dir.path().join("main/index.ndjson")).unwrap();
    assert_eq!(store.list("main").unwrap()[0].id, id);
}

#[test]
fn a_commit_appends_one_index_line_and_a_stale_index_is_completed_from_the_transcripts() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let index = dir.path().join("main/index.ndjson");
    let mut ids = Vec::new();
    for i in 0..3 {
        let mut t = store.create("main", None).unwrap();
        t.append_message(Message::user(format!("question {i}")))
            .unwrap();
        let before = std::fs::read(&index).unwrap();
        store.commit("main", &mut t).unwrap();
        let after = std::fs::read(&index).unwrap();
        // Appended, never rewritten: the old bytes are a prefix, plus one line.
        assert!(after.starts_with(&before));
        assert_eq!(
            after[before.len()..]
                .iter()
                .filter(|b| **b == b'\n')
                .count(),
            1
        );
        ids.push(t.id().to_string());
    }
    // A crash lost the index's later lines: the listing still has every session.
    let text = std::fs::read_to_string(&index).unwrap();
    std::fs::write(&index, text.lines().next().unwrap()).unwrap();
    let listed: Vec<String> = store
        .list("main")
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert!(ids.iter().all(|id| listed.contains(id)));
    let titles: Vec<String> = store
        .list("main")
        .unwrap()
        .into_iter()
        .map(|r| r.title)
        .collect();
    for i in 0..3 {
        assert!(titles.contains(&format!("question {i}")), "{titles:?}");
    }
    // A transcript removed behind the store's back leaves the listing too.
    std::fs::remove_file(dir.path().join(format!("main/{}.jsonl", ids[0]))).unwrap();
    assert_eq!(store.list("main").unwrap().len(), 2);
    // Deleted through the store: gone from the listing.
    store.delete("main", &ids[1]).unwrap();
    let left: Vec<String> = store
        .list("main")
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(left, vec![ids[2].clone()]);
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning_and_earlier_entries_survive() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut t = store.create("main", None).unwrap();
    t.append_message(Message::user("kept")).unwrap();
    store.commit("main", &mut t).unwrap();
    let (id, path) = (t.id().to_string(), t.path().unwrap().to_path_buf());
    drop(t);
    // A crash in the middle of writing the next entry.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"id":"abc","parentId":"x","atMs":1,"type":"mess"#)
        .unwrap();

    let damaged = std::fs::read(&path).unwrap();
    // Reading (what `sessions show` and `list` do) warns and writes nothing.
    let t = store.open_read_only("main", &id).unwrap();
    assert_eq!(t.warnings().len(), 1);
    assert!(
        t.warnings()[0].contains(":3: skipped a torn last line"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(t.context(), vec![Message::user("kept")]);
    assert_eq!(std::fs::read(&path).unwrap(), damaged);
    // Continuing it needs the explicit repair, which keeps a backup.
    let refused = store.open("main", &id).unwrap_err().to_string();
    assert!(refused.contains("sessions repair"), "{refused}");
    let backup = store.repair("main", &id).unwrap().expect("repaired");
    assert_eq!(std::fs::read(&backup).unwrap(), damaged);
    let mut t = store.open("main", &id).unwrap();
    t.append_message(Message::assistant("after the crash"))
        .unwrap();
    store.commit("main", &mut t).unwrap();
    let again = store.open("main", &id).unwrap();
    assert!(again.warnings().is_empty());
    assert_eq!(
        again.context(),
        vec![Message::user("kept"), Message::assistant("after the crash")]
    );

    // Damage anywhere else is an error naming the line, not a silent loss.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("\"kept\"", "\"kept", 1);
    std::fs::write(&path, text).unwrap();
    let err = store.open("main", &id).unwrap_err();
    assert!(
        matches!(err, SessionError::Corrupt { line: 2, .. }),
        "{err}"
    );
}

#[test]
fn a_fork_copies_the_branch_into_a_new_file_with_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut t = store.create("main", None).unwrap();
    let first = t.append_message(Message::user("one")).unwrap();
    t.append_message(Message::assistant("two")).unwrap();
    store.commit("main", &mut t).unwrap();
    let fork = store.fork("main", t.id(), Some(&first)).unwrap();
    assert_eq!(fork.header().parent_session.as_deref(), Some(t.id()));
    assert_eq!(fork.context(), vec![Message::user("one")]);
    assert_ne!(fork.path(), t.path());
    assert_eq!(
        store.open("main", t.id()).unwrap().context().len(),
        2,
        "the original is untouched"
    );
    assert_eq!(store.list("main").unwrap().len(), 2);
    assert!(matches!(
        store.fork("main", t.id(), Some("nope")),
        Err(SessionError::NoEntry { .. })
    ));
    assert!(matches!(
        store.open("main", "../etc"),
        Err(SessionError::BadId(_))
    ));
}

fn fake_config(fake: &FakeProvider, dir: &std::path::Path, window: u64) -> Config {
    config(
        json!({
            "models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url(),
                "retry": {"maxAttempts": 1}, "models": [{"id": "m", "contextWindow": window}]}}},
            "agents": {"defaults": {"model": "fake/m", "compaction": {"reserveTokens": 100, "keepRecentTokens": 60, "maxOverflowRetries": 1}}}
        }),
        dir,
    )
}

fn long_history() -> Vec<SharedMessage> {
    let mut h = Vec::new();
    for i in 0..6 {
        h.push(Message::user(format!(
            "question {i}: {}",
            "words ".repeat(30)
        )));
        h.extend(tool_pair(&format!("c{i}")));
        h.push(Message::assistant(format!("answer {i}")));
    }
    h.into_iter().map(Into::into).collect()
}

fn first_message_text(body: &serde_json::Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_context_overflow_is_compacted_then_retried() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::status(400, json!({"error": {"message": "maximum context length exceeded", "code": "context_length_exceeded"}})));
    fake.push(Reply::sse(wire::chat_text(
        &["the user asked six questions"],
        5,
        5,
    )));
    fake.push(Reply::sse(wire::chat_text(&["fine"], 5, 1)));
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_config(&fake, dir.path(), 1_000_000);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &[]).await;
    let mut session = clawhost_runner::Session::new("s", "main");
    session.history = long_history();
    let before = session.history.clone();
    let ctx = RunContext::new("main", "fake/m");
    let out = runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &ctx,
            "and now?",
        )
        .await
        .unwrap();
    assert_eq!(out.answer, "fine");
    assert_eq!(session.compactions.len(), 1);
    let c = &session.compactions[0];
    assert_eq!(c.summary, "the user asked six questions");
    // Recent messages kept verbatim, starting at a clean boundary.
    let kept = &before[before.len() - c.kept..];
    assert!(!matches!(*kept[0], Message::ToolResult(_)));
    assert_eq!(&session.history[1..1 + c.kept], kept);
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    // The summary call went through the same transport, with the summarized messages.
    assert!(first_message_text(&requests[1].body).starts_with("Summarize the conversation"));
    assert!(requests[1].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .starts_with("USER: question 0"));
    assert!(first_message_text(&requests[2].body)
        .starts_with("[Summary of the earlier conversation]\nthe user asked six questions"));
    assert!(ctx
        .events
        .snapshot()
        .iter()
        .any(|e| matches!(e, TurnEvent::Compaction { trigger, .. } if trigger == "overflow")));
}

#[tokio::test]
async fn nearing_the_window_compacts_before_the_call() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["short summary"], 5, 5)));
    fake.push(Reply::sse(wire::chat_text(&["ok"], 5, 1)));
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_config(&fake, dir.path(), 400);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &[]).await;
    let mut session = clawhost_runner::Session::new("s", "main");
    session.history = long_history();
    let ctx = RunContext::new("main", "fake/m");
    runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &ctx,
            "next",
        )
        .await
        .unwrap();
    assert_eq!(session.compactions.len(), 1);
    assert!(ctx
        .events
        .snapshot()
        .iter()
        .any(|e| matches!(e, TurnEvent::Compaction { trigger, .. } if trigger == "threshold")));
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn persisted_turns_record_runtime_compaction_and_messages_and_resume() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_config(&fake, dir.path(), 1_000_000);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &[]).await;
    let store = SessionStore::new(dir.path().join("sessions"));
    let id = store.create("main", None).unwrap().id().to_string();
    fake.push(Reply::sse(wire::chat_tool_call(
        "c1",
        "echo",
        &["{\"text\":\"hi\"}"],
    )));
    fake.push(Reply::sse(wire::chat_text(&["first answer"], 1, 1)));
    fake.push(Reply::sse(wire::chat_text(&["second answer"], 1, 1)));
    let generation = runtimes.current("main").unwrap();
    let ctx = RunContext::new("main", "fake/m");
    runner
        .run_persisted_turn(&store, "main", &id, generation.clone(), &ctx, "one")
        .await
        .unwrap();
    let (_, session) = runner
        .run_persisted_turn(&store, "main", &id, generation.clone(), &ctx, "two")
        .await
        .unwrap();
    assert_eq!(session.history.len(), 6);
    // The second request carried the first turn, read back from disk.
    assert_eq!(
        fake.requests()[2].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    let t = store.open("main", &id).unwrap();
    assert_eq!(t.runtime().as_deref(), Some("openclaw"));
    assert_eq!(t.shared_context(), session.history);
    assert_eq!(
        t.entries()
            .iter()
            .filter(|e| matches!(e.body, EntryBody::Runtime { .. }))
            .count(),
        1
    );

    runner.reset_persisted(&store, "main", &id).await.unwrap();
    let t = store.open("main", &id).unwrap();
    assert!(t.context().is_empty() && t.runtime().is_none());
    assert_eq!(
        t.full_branch().len(),
        8,
        "reset keeps the earlier entries on disk"
    );
}

#[tokio::test]
async fn runs_on_one_session_are_serialized_and_other_sessions_go_on() {
    let fake = FakeProvider::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    fake.push(Reply::Held(
        Box::new(Reply::sse(wire::chat_text(&["first"], 1, 1))),
        gate.clone(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_config(&fake, dir.path(), 1_000_000);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = Arc::new(runner_with(cfg, &[]).await);
    let store = SessionStore::new(dir.path().join("sessions"));
    let a = store.create("main", None).unwrap().id().to_string();
    let b = store.create("main", None).unwrap().id().to_string();
    let generation = runtimes.current("main").unwrap();
    let spawn = |session: String, text: &'static str| {
        let (runner, store, generation) = (runner.clone(), store.clone(), generation.clone());
        tokio::spawn(async move {
            runner
                .run_persisted_turn(
                    &store,
                    "main",
                    &session,
                    generation,
                    &RunContext::new("main", "fake/m"),
                    text,
                )
                .await
                .map(|(o, _)| o.answer)
        })
    };
    let first = spawn(a.clone(), "one");
    tokio::time::timeout(FakeProvider::PATIENCE, async {
        while fake.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await
        }
    })
    .await
    .unwrap();
    fake.push(Reply::sse(wire::chat_text(&["other session"], 1, 1)));
    fake.push(Reply::sse(wire::chat_text(&["second"], 1, 1)));
    let second_same = spawn(a.clone(), "two");
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Session b is not held up by session a's lane.
    let other = tokio::time::timeout(FakeProvider::PATIENCE, spawn(b.clone(), "elsewhere"))
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(other, "other session");
    assert_eq!(
        fake.requests().len(),
        2,
        "the second run on session a waits for the first"
    );
    gate.notify_one();
    assert_eq!(first.await.unwrap().unwrap(), "first");
    assert_eq!(second_same.await.unwrap().unwrap(), "second");
    let texts: Vec<String> = store
        .open("main", &a)
        .unwrap()
        .context()
        .iter()
        .map(|m| match m {
            Message::User { text, .. } => text.clone(),
            Message::Assistant { text, .. } => text.clone(),
            Message::ToolResult(r) => r.content.clone(),
        })
        .collect();
    assert_eq!(texts, ["one", "first", "two", "second"]);
}

#[test]
fn session_files_are_private_whatever_the_umask_and_old_ones_are_tightened() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let store = SessionStore::new(&root);
    // The test process's umask is whatever the shell's is (022 commonly):
    // the modes below are the store's own.
    let mut t = store.create("main", None).unwrap();
    t.append_message(Message::user("a secret")).unwrap();
    store.commit("main", &mut t).unwrap();
    let file = root.join("main").join(format!("{}.jsonl", t.id()));
    let index = root.join("main").join("index.ndjson");
    assert_eq!(mode(&root), 0o700);
    assert_eq!(mode(&root.join("main")), 0o700);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&index), 0o600);
    // Made world-readable by an older version: tightened on open.
    for p in [&file, &index] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(root.join("main"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut t = store.open("main", t.id()).unwrap();
    t.append_message(Message::assistant("kept")).unwrap();
    store.commit("main", &mut t).unwrap();
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&index), 0o600);
    assert_eq!(mode(&root.join("main")), 0o700);
}
