//! What the tests of the native agent runtimes (`tests/codex.rs`,
//! `tests/acp.rs`) share: the fake model's replies as Codex reads them, the
//! processes a runtime left, and bounded waiting.

use std::path::Path;

use serde_json::{json, Value};

use crate::fake_provider::Reply;
use crate::wire;

/// Responses SSE event `name` with `data`.
pub fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// A text answer as Codex reads it: the message item is finished with
/// `response.output_item.done` before the response completes.
pub fn text_answer(id: &str, pieces: &[&str]) -> Reply {
    text_answer_using(id, pieces, 10)
}

/// [`text_answer`], reporting `input_tokens` used (a large figure makes
/// Codex compact its thread when it passes `model_auto_compact_token_limit`).
pub fn text_answer_using(id: &str, pieces: &[&str], input_tokens: u64) -> Reply {
    let text: String = pieces.concat();
    let mut events = wire::responses_text(pieces, input_tokens, 5);
    let done = event(
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": {"id": id, "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
    );
    let last = events.len() - 1;
    events.insert(last, done);
    Reply::sse(events)
}

/// A function call to `name` with `args`.
pub fn tool_call(call_id: &str, name: &str, args: Value) -> Reply {
    Reply::sse(wire::responses_tool_call(
        call_id,
        name,
        &[&args.to_string()],
    ))
}

/// A function call to `name` in a tool `namespace` (Codex offers an MCP
/// server's tools as the namespace `mcp__<server>`).
pub fn namespaced_tool_call(call_id: &str, namespace: &str, name: &str, args: Value) -> Reply {
    let events = wire::responses_tool_call(call_id, name, &[&args.to_string()])
        .into_iter()
        .map(|sse| {
            let Some((head, data)) = sse.trim_end().split_once("\ndata: ") else {
                return sse;
            };
            let mut data: Value = serde_json::from_str(data).expect("the wire's own JSON");
            if let Some(item) = data.get_mut("item").and_then(Value::as_object_mut) {
                item.insert("namespace".into(), namespace.into());
            }
            format!("{head}\ndata: {data}\n\n")
        })
        .collect();
    Reply::sse(events)
}

/// Merge `extra` into `into` (objects key by key, anything else replaced).
pub fn merge(into: &mut Value, extra: Value) {
    match (into, extra) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

/// The processes started with `CODEX_HOME=<home>` (the app-server and its
/// children), from `/proc`.
pub fn processes_of(home: &Path) -> Vec<i32> {
    let wanted = format!("CODEX_HOME={}", home.display());
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        if !zombie
            && environ
                .split(|b| *b == 0)
                .any(|var| var == wanted.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// Wait (bounded) until `done` holds.
pub async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The config block of the README that follows `<!-- {marker} -->`, as JSON.
pub fn readme_config(marker: &str) -> Value {
    let readme = std::fs::read_to_string(clawhost::build::repo_root().join("README.md")).unwrap();
    let after = readme
        .split_once(&format!("<!-- {marker} -->"))
        .unwrap_or_else(|| panic!("the README has no `{marker}` block"))
        .1;
    let body = after
        .split_once("```json5\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a json5 block follows the marker")
        .0;
    clawhost_config::read_json5_value(body).expect("the README's config is JSON5")
}

/// Point a README runtime config at this machine: the granted process `name`
/// runs `command` with `extra_args` after its own, its environment's host
/// variables replaced by `env`, in `workspace`.
pub fn localize_process(
    cfg: &mut Value,
    plugin: &str,
    name: &str,
    (command, extra_args, env): (&Path, &[String], Value),
    workspace: &Path,
) {
    let process = &mut cfg["plugins"]["entries"][plugin]["grants"]["processes"][name];
    assert!(
        process.is_object(),
        "the README grants `{name}` to `{plugin}`"
    );
    process["command"] = json!(command.to_string_lossy());
    let args = process["args"].as_array_mut().expect("args");
    args.extend(extra_args.iter().map(|a| json!(a)));
    process["env"] = env;
    process["cwd"] = json!(workspace.to_string_lossy());
}

/// What each message of a history is: `user`, `assistant` (text only),
/// `tool-call` or `tool-result`.
pub fn kinds<M: std::ops::Deref<Target = clawhost_agent_core::Message>>(
    history: &[M],
) -> Vec<&'static str> {
    use clawhost_agent_core::Message;
    history
        .iter()
        .map(|m| match &**m {
            Message::User { .. } => "user",
            Message::Assistant { tool_calls, .. } if tool_calls.is_empty() => "assistant",
            Message::Assistant { .. } => "tool-call",
            Message::ToolResult(_) => "tool-result",
        })
        .collect()
}

/// A persisted turn of `text` on session `id`, running in a task.
pub fn spawn_turn(
    runner: &std::sync::Arc<clawhost_runner::EmbeddedRunner>,
    store: &std::sync::Arc<clawhost_sessions::SessionStore>,
    id: &str,
    generation: std::sync::Arc<clawhost_llm::ModelRuntimeGeneration>,
    (ctx, text): (&clawhost_agent_core::RunContext, &'static str),
) -> tokio::task::JoinHandle<
    Result<
        (clawhost_agent_core::TurnOutcome, clawhost_runner::Session),
        clawhost_runner::PersistError,
    >,
> {
    let (runner, store, id, ctx) = (runner.clone(), store.clone(), id.to_string(), ctx.clone());
    tokio::spawn(async move {
        runner
            .run_persisted_turn(&store, "main", &id, generation, &ctx, text)
            .await
    })
}

/// Abort a native runtime's turn while its model streams (a first piece,
/// then the fake stalls): the turn ends as aborted, every process started
/// with `CODEX_HOME=<home>` is gone, and the transcript keeps the user's
/// message and the piece that streamed, then `turn_aborted`.
pub async fn abort_midway(
    fake: &crate::fake_provider::FakeProvider,
    runner: clawhost_runner::EmbeddedRunner,
    runtimes: &clawhost_llm::ModelRuntimes,
    (dir, home): (&Path, &Path),
    model_ref: &str,
) {
    use clawhost_agent_core::{Message, RunContext};
    use clawhost_sessions::{EntryBody, SessionStore};
    let runner = std::sync::Arc::new(runner);
    let store = std::sync::Arc::new(SessionStore::new(dir.join("sessions")));
    let id = store.create("main", None).unwrap().id().to_string();
    let mut events = wire::responses_text(&["Halfway ", "there"], 10, 5);
    events.truncate(4);
    fake.push(Reply::sse_stalling(events, 4));
    let generation = runtimes.current("main").unwrap();
    abort_once_streaming(&runner, &store, &id, generation, model_ref, || {
        assert!(!processes_of(home).is_empty(), "the runtime's process runs");
    })
    .await;
    // The whole process group is gone.
    eventually("the runtime's processes to end", || {
        processes_of(home).is_empty()
    })
    .await;
    let t = store.open("main", &id).unwrap();
    let bodies: Vec<&EntryBody> = t.entries().iter().map(|e| &e.body).collect();
    assert!(
        bodies.iter().any(|b| matches!(b,
            EntryBody::Custom { custom_type, .. } if custom_type == "turn_aborted")),
        "{bodies:#?}"
    );
    assert!(
        t.context()
            .iter()
            .any(|m| matches!(m, Message::Assistant { text, .. } if text == "Halfway ")),
        "{bodies:#?}"
    );
    // The runtime was asked to stop its turn (`turn/interrupt`,
    // `session/cancel`) before its process was killed, so its own thread
    // keeps the aborted turn: resumed, its model sees the user's message
    // and that the turn was interrupted (killed at once, `codex-acp` loses
    // the whole turn).
    fake.push(text_answer("msg_after", &["Resumed."]));
    let ctx = RunContext::new("main", model_ref);
    let generation = runtimes.current("main").unwrap();
    let (outcome, _) = runner
        .run_persisted_turn(&store, "main", &id, generation, &ctx, "go on")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Resumed.");
    let last = fake.requests().last().unwrap().body["input"].to_string();
    assert!(
        last.contains("start something long")
            && last.contains("The user interrupted the previous turn"),
        "{}",
        &last[last.len().saturating_sub(3000)..]
    );
}

/// Run "start something long" on session `id` with `model_ref`, and abort
/// it once the reply's first piece ("Halfway ") has streamed (after
/// `while_running`): the turn ends aborted.
pub async fn abort_once_streaming(
    runner: &std::sync::Arc<clawhost_runner::EmbeddedRunner>,
    store: &std::sync::Arc<clawhost_sessions::SessionStore>,
    id: &str,
    generation: std::sync::Arc<clawhost_llm::ModelRuntimeGeneration>,
    model_ref: &str,
    while_running: impl FnOnce(),
) {
    use clawhost_agent_core::{RunContext, TurnEvent};
    let ctx = RunContext::new("main", model_ref);
    let turn = spawn_turn(
        runner,
        store,
        id,
        generation,
        (&ctx, "start something long"),
    );
    eventually("the streamed piece", || {
        ctx.events
            .snapshot()
            .iter()
            .any(|e| matches!(e, TurnEvent::TextDelta { text, .. } if text == "Halfway "))
    })
    .await;
    while_running();
    ctx.cancel.cancel();
    let result = turn.await.unwrap();
    assert!(
        matches!(
            result,
            Err(clawhost_runner::PersistError::Run(
                clawhost_runner::RunError::Aborted
            ))
        ),
        "{:?}",
        result.err()
    );
}

/// Kill a native runtime's processes (every one started with
/// `CODEX_HOME=<home>`) while its second model call hangs, after `first`
/// completed a tool call: the turn fails saying the process exited, and the
/// transcript keeps the user's message, the call and its result.
pub async fn kill_midway(
    fake: &crate::fake_provider::FakeProvider,
    runner: clawhost_runner::EmbeddedRunner,
    runtimes: &clawhost_llm::ModelRuntimes,
    (dir, home): (&Path, &Path),
    (model_ref, first): (&str, Reply),
) -> String {
    use clawhost_sessions::{EntryBody, SessionStore};
    let runner = std::sync::Arc::new(runner);
    let store = std::sync::Arc::new(SessionStore::new(dir.join("sessions")));
    let id = store.create("main", None).unwrap().id().to_string();
    fake.push(first);
    fake.push(Reply::sse_stalling(
        wire::responses_text(&["never"], 1, 1),
        1,
    ));
    let ctx = clawhost_agent_core::RunContext::new("main", model_ref);
    let generation = runtimes.current("main").unwrap();
    let seen = fake.requests().len();
    let turn = spawn_turn(&runner, &store, &id, generation, (&ctx, "go"));
    eventually("the second model request", || {
        fake.requests().len() >= seen + 2
    })
    .await;
    for pid in processes_of(home) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let error = turn.await.unwrap().unwrap_err().to_string();
    assert!(error.contains("exited"), "{error}");
    let t = store.open("main", &id).unwrap();
    assert_eq!(
        kinds(&t.shared_context()),
        ["user", "tool-call", "tool-result"]
    );
    assert!(t.entries().iter().any(|e| matches!(&e.body,
        EntryBody::Custom { custom_type, data } if custom_type == "turn_error"
            && data["error"].as_str().is_some_and(|m| m.contains("exited")))));
    error
}

/// Where a Codex-based runtime (the app-server, `codex-acp`) keeps its
/// state and works, under a test's directory; created.
pub struct CodexDirs {
    /// `CODEX_HOME` (and `HOME`).
    pub home: std::path::PathBuf,
    /// Its working directory.
    pub workspace: std::path::PathBuf,
}

impl CodexDirs {
    /// `dir/codex-home` and `dir/workspace`.
    pub fn new(dir: &Path) -> Self {
        let dirs = Self {
            home: dir.join("codex-home"),
            workspace: dir.join("workspace"),
        };
        std::fs::create_dir_all(&dirs.home).unwrap();
        std::fs::create_dir_all(&dirs.workspace).unwrap();
        dirs
    }

    /// The whole environment a granted Codex process gets: its home and the
    /// fake provider's key.
    pub fn env(&self) -> Value {
        json!([
            {"name": "CODEX_HOME", "value": self.home.to_string_lossy()},
            {"name": "HOME", "value": self.home.to_string_lossy()},
            {"name": "FAKE_KEY", "value": "sk-test"}
        ])
    }
}

/// The `-c` arguments that make Codex use `fake` as its model provider.
pub fn fake_model_args(fake: &crate::fake_provider::FakeProvider) -> Vec<String> {
    vec![
        "-c".into(),
        "model_provider=\"fake\"".into(),
        "-c".into(),
        format!(
            "model_providers.fake={{name=\"fake\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"FAKE_KEY\"}}",
            fake.url()
        ),
    ]
}

/// What `clawhost mcp serve` serves an agent (its config written under
/// `dir`): text-tools, and policy-guard blocking any call that mentions
/// "forbidden"; its sessions in `dir/mcp-sessions`.
pub fn host_tools_config(dir: &Path) -> std::path::PathBuf {
    let serve = dir.join("serve.json");
    std::fs::write(
        &serve,
        json!({
            "plugins": {
                "paths": [crate::plugins_dir()],
                "cacheDir": crate::cache_dir(),
                "cacheKeyFile": crate::cache_key_file(),
                "allow": ["text-tools", "policy-guard"],
                "entries": {"policy-guard": {"config": {"blockWords": ["forbidden"]}}}
            },
            "tools": {"testFixtures": false},
            "sessions": {"dir": dir.join("mcp-sessions")},
            "models": {"providers": {"scripted": {"api": "scripted", "script": dir.join("script.json")}}},
            "agents": {"defaults": {"model": "scripted/test"}}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("script.json"), "[]").unwrap();
    serve
}
