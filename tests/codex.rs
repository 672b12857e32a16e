//! The `codex` runtime against the real Codex app-server (npm
//! `@openai/codex`, pinned in `support/npm.rs`), which talks to a fake
//! OpenAI Responses server on loopback. The bridge is the sandboxed
//! `plugins/codex`; the app-server is the process the operator granted it.

use std::path::Path;

use clawhost_agent_core::{Message, RunContext, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::{EmbeddedRunner, RunError};
use clawhost_sessions::{EntryBody, SessionStore};
use clawhost_tests::agents::{
    abort_midway, eventually, fake_model_args, kill_midway, kinds, localize_process, merge,
    processes_of, readme_config, text_answer, text_answer_using, tool_call, CodexDirs,
};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, npm, runner_with, session_turn};
use serde_json::{json, Value};

/// A granted app-server: the real `codex app-server`, its model provider the
/// fake, its home and workspace under `dir`.
fn codex_config(fake: &FakeProvider, dir: &Path, extra: Value) -> clawhost_config::Config {
    let codex = npm::bin(npm::CODEX, "codex");
    let dirs = CodexDirs::new(dir);
    let mut args = vec!["app-server".to_string()];
    args.extend(fake_model_args(fake));
    let mut cfg = json!({
        "models": {"providers": {"fake": {
            "baseUrl": format!("{}/v1", fake.url()), "api": "openai-responses", "apiKey": "sk-test",
            "models": [{"id": "gpt-5.1", "agentRuntime": {"id": "codex"}}]
        }}},
        "agents": {"defaults": {"model": "fake/gpt-5.1"}},
        "plugins": {"entries": {
            "codex": {
                "grants": {"harness": true, "processes": {"app-server": {
                    "command": codex.to_string_lossy(),
                    "args": args,
                    "env": dirs.env(),
                    "cwd": dirs.workspace.to_string_lossy()
                }}},
                "config": {"startTimeoutMs": 60000, "idleTimeoutMs": 60000}
            },
            "policy-guard": {"config": {"blockTools": ["read_note"]}}
        }}
    });
    merge(&mut cfg, extra);
    config(cfg, dir)
}

async fn codex_runner(cfg: clawhost_config::Config) -> (EmbeddedRunner, ModelRuntimes) {
    codex_runner_with(cfg, &[]).await
}

/// [`codex_runner`] with more plugin packages.
async fn codex_runner_with(
    cfg: clawhost_config::Config,
    more: &[&str],
) -> (EmbeddedRunner, ModelRuntimes) {
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let mut packages = vec!["codex", "text-tools", "policy-guard"];
    packages.extend(more);
    let runner = runner_with(cfg, &packages).await;
    assert!(runner.harnesses().ids().contains(&"codex".to_string()));
    (runner, runtimes)
}

/// The texts of the `input` items of a Responses request.
fn request_text(body: &Value) -> String {
    body["input"].to_string()
}

#[tokio::test]
async fn a_codex_turn_bridges_host_tools_streams_and_resumes_its_thread() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = codex_runner(codex_config(&fake, dir.path(), json!({}))).await;
    let store = SessionStore::new(dir.path().join("sessions"));
    let id = store.create("main", None).unwrap().id().to_string();
    let generation = runtimes.current("main").unwrap();

    // Turn 1: Codex calls the WASM plugin tool `word_count` (a dynamic tool),
    // then a tool policy-guard blocks, then answers in streamed pieces.
    fake.push(tool_call(
        "call_wc",
        "word_count",
        json!({"text": "one two three"}),
    ));
    fake.push(tool_call("call_rn", "read_note", json!({"name": "a.txt"})));
    fake.push(text_answer("msg_a", &["Three ", "words."]));
    let ctx = RunContext::new("main", "fake/gpt-5.1");
    let (outcome, session) = runner
        .run_persisted_turn(
            &store,
            "main",
            &id,
            generation.clone(),
            &ctx,
            "count my words",
        )
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Three words.");
    assert_eq!(session.runtime.as_deref(), Some("codex"));
    // The app-server lived for the turn only.
    let home = dir.path().join("codex-home");
    eventually("the app-server to end with the turn", || {
        processes_of(&home).is_empty()
    })
    .await;

    // The tool's answer reached the model (the second request carries it).
    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let second = request_text(&requests[1].body);
    assert!(second.contains("\\\"words\\\":3"), "{second}");
    // The blocked call was refused by the host's hooks, and the model saw why.
    let third = request_text(&requests[2].body);
    assert!(third.contains("blocked"), "{third}");
    let events = ctx.events.snapshot();
    assert!(
        events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, .. }
            if hook.name() == "before_tool_call" && plugin == "policy-guard")),
        "{events:#?}"
    );
    // The answer streamed as deltas, as the built-in loop's do.
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), "Three words.", "{events:#?}");
    // The transcript mirrors the thread: user, each call and its result, answer.
    let kinds = kinds(&session.history);
    assert_eq!(
        kinds,
        [
            "user",
            "tool-call",
            "tool-result",
            "tool-call",
            "tool-result",
            "assistant"
        ]
    );
    let (thread, agent) = session.native_thread.clone().expect("the thread is stored");
    assert!(agent.starts_with("codex app-server 0.171.0"), "{agent}");
    let status = runner.status(&session, &generation).join("\n");
    assert!(status.contains("Runtime: codex"), "{status}");
    assert!(
        status.contains(&format!("Native runtime: {agent} (thread {thread})")),
        "{status}"
    );

    // Turn 2, in a new app-server process: the session's thread is resumed,
    // so Codex sends the model the first turn again.
    fake.push(text_answer("msg_b", &["Still here."]));
    let ctx = RunContext::new("main", "fake/gpt-5.1");
    let (outcome, session) = runner
        .run_persisted_turn(&store, "main", &id, generation, &ctx, "are you there?")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Still here.");
    assert_eq!(session.native_thread.as_ref().map(|t| &t.0), Some(&thread));
    let last = request_text(&fake.requests()[3].body);
    assert!(
        last.contains("count my words") && last.contains("are you there?"),
        "{last}"
    );
    let t = store.open("main", &id).unwrap();
    let recorded: Vec<&Value> = t
        .entries()
        .iter()
        .filter_map(|e| match &e.body {
            EntryBody::Custom { custom_type, data } if custom_type == "native_thread" => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(recorded.len(), 1, "one thread, recorded once: {recorded:?}");
    assert_eq!(recorded[0]["thread"], thread.as_str());
}

#[tokio::test]
async fn codex_commands_are_asked_of_the_hosts_approvals() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    // The operator allowlisted `touch`, not `rm`.
    let extra = json!({"tools": {"exec": {"allow": ["touch"]}}});
    let (runner, runtimes) = codex_runner(codex_config(&fake, dir.path(), extra)).await;
    let generation = runtimes.current("main").unwrap();
    std::fs::write(workspace.join("keep.txt"), "precious").unwrap();
    fake.push(tool_call(
        "call_1",
        "exec_command",
        json!({"cmd": "touch made-by-codex"}),
    ));
    fake.push(tool_call(
        "call_2",
        "exec_command",
        json!({"cmd": "rm keep.txt"}),
    ));
    fake.push(text_answer("msg_c", &["Done."]));
    let mut session = clawhost_runner::Session::new("s1", "main");
    let ctx = RunContext::new("main", "fake/gpt-5.1");
    let outcome = runner
        .run_session_turn(&mut session, generation, &ctx, "tidy up")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Done.");
    // The allowlisted command ran; the other was declined (no operator:
    // approvals.nonInteractive is deny) and the file is still there.
    let events = ctx.events.snapshot();
    assert!(workspace.join("made-by-codex").exists(), "{events:#?}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("keep.txt")).unwrap(),
        "precious"
    );
    let events = ctx.events.snapshot();
    let exec_results: Vec<(bool, String)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolResult {
                tool,
                is_error,
                content,
                ..
            } if tool == "exec" => Some((*is_error, content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(exec_results.len(), 2, "{events:#?}");
    assert!(!exec_results[0].0, "{exec_results:?}");
    assert!(exec_results[1].0, "{exec_results:?}");
    // The mirror names the commands as the model asked for them.
    let calls: Vec<String> = session
        .history
        .iter()
        .filter_map(|m| match &**m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                Some(tool_calls[0].arguments["command"].as_str()?.to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["touch made-by-codex", "rm keep.txt"]);
}

/// The error of a turn on `codex` whose granted app-server is `grant`.
async fn turn_error(fake: &FakeProvider, grant: Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let extra = json!({"plugins": {"entries": {"codex": {
        "grants": {"processes": {"app-server": grant}},
        "config": {"startTimeoutMs": 2000}
    }}}});
    let (runner, runtimes) = codex_runner(codex_config(fake, dir.path(), extra)).await;
    let generation = runtimes.current("main").unwrap();
    let mut session = clawhost_runner::Session::new("s1", "main");
    let ctx = RunContext::new("main", "fake/gpt-5.1");
    let error = runner
        .run_session_turn(&mut session, generation, &ctx, "hello")
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::Harness { .. }), "{error}");
    error.to_string()
}

#[tokio::test]
async fn a_hostile_or_silent_app_server_ends_the_turn_with_a_clear_error() {
    let fake = FakeProvider::start().await;
    let sh = |script: &str| json!({"command": "sh", "args": ["-c", script]});
    // Never answers `initialize`.
    let error = turn_error(&fake, json!({"command": "sleep", "args": ["600"]})).await;
    assert!(
        error.contains("initialize") && error.contains("timed out"),
        "{error}"
    );
    // Answers with something that is not JSON-RPC.
    let error = turn_error(&fake, sh("read line; echo 'this is not json'; sleep 600")).await;
    assert!(error.contains("not JSON-RPC: this is not json"), "{error}");
    // Answers with a 100 MB line: refused at the line bound, the process stopped.
    let error = turn_error(
        &fake,
        sh("read line; head -c 100000000 /dev/zero | tr '\\0' a; echo; sleep 600"),
    )
    .await;
    assert!(error.contains("longer than 1048576 bytes"), "{error}");
    // Exits at once.
    let error = turn_error(&fake, sh("exit 3")).await;
    assert!(error.contains("exited") && error.contains("3"), "{error}");
    // A command that does not exist.
    let error = turn_error(&fake, json!({"command": "/nonexistent/codex"})).await;
    assert!(error.contains("could not start"), "{error}");
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn a_plugin_without_the_process_grant_cannot_start_one() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = codex_config(&fake, dir.path(), json!({}));
    if let Some(entry) = cfg.plugins.entries.get_mut("codex") {
        entry.grants.processes.clear();
    }
    let (runner, runtimes) = codex_runner(cfg).await;
    let generation = runtimes.current("main").unwrap();
    let mut session = clawhost_runner::Session::new("s2", "main");
    let ctx = RunContext::new("main", "fake/gpt-5.1");
    let error = runner
        .run_session_turn(&mut session, generation, &ctx, "hello")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no process `app-server` is granted"),
        "{error}"
    );
}

#[tokio::test]
async fn an_aborted_codex_turn_stops_the_app_server_and_is_stored_as_aborted() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = codex_runner(codex_config(&fake, dir.path(), json!({}))).await;
    let home = dir.path().join("codex-home");
    abort_midway(
        &fake,
        runner,
        &runtimes,
        (dir.path(), &home),
        "fake/gpt-5.1",
    )
    .await;
}

#[tokio::test]
async fn an_app_server_killed_mid_turn_fails_the_turn_and_keeps_what_completed() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = codex_runner(codex_config(&fake, dir.path(), json!({}))).await;
    let home = dir.path().join("codex-home");
    // A plugin tool call that completes, then a reply that never comes.
    let first = tool_call("call_wc", "word_count", json!({"text": "a b"}));
    let error = kill_midway(
        &fake,
        runner,
        &runtimes,
        (dir.path(), &home),
        ("fake/gpt-5.1", first),
    )
    .await;
    assert!(error.contains("Codex app-server"), "{error}");
}

#[tokio::test]
async fn the_readme_codex_config_runs_a_turn() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dirs = CodexDirs::new(dir.path());
    // The README's config, with only what is this machine's replaced: the
    // command's path, the model endpoint, the variables' values.
    let mut cfg = readme_config("codex-config");
    localize_process(
        &mut cfg,
        "codex",
        "app-server",
        (
            &npm::bin(npm::CODEX, "codex"),
            &fake_model_args(&fake),
            dirs.env(),
        ),
        &dirs.workspace,
    );
    cfg["models"]["providers"]["openai"]["baseUrl"] = json!(format!("{}/v1", fake.url()));
    cfg["models"]["providers"]["openai"]["apiKey"] = json!("sk-test");
    let (runner, runtimes) = codex_runner(config(cfg, dir.path())).await;
    fake.push(text_answer("msg_r", &["From ", "the README."]));
    let mut session = clawhost_runner::Session::new("s1", "main");
    let ctx = RunContext::new("main", "openai/gpt-5.1");
    let outcome = runner
        .run_session_turn(&mut session, runtimes.current("main").unwrap(), &ctx, "hi")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "From the README.");
    assert_eq!(session.runtime.as_deref(), Some("codex"));
}

/// [`codex_config`]'s grant and route as a config file's keys, for the
/// composition root the gateway, `clawhost run` and `chat` share.
fn composed(fake: &FakeProvider, dir: &Path) -> Value {
    let cfg = codex_config(fake, dir, json!({}));
    let process = &cfg.plugins.entries["codex"].grants.processes["app-server"];
    let env: Vec<Value> = process
        .env
        .iter()
        .map(|e| match e {
            clawhost_config::EnvGrant::Fixed { name, value } => {
                json!({"name": name, "value": value})
            }
            clawhost_config::EnvGrant::Inherit(name) => json!(name),
        })
        .collect();
    json!({
        "models": {"providers": {"fake": {
            "baseUrl": format!("{}/v1", fake.url()), "api": "openai-responses", "apiKey": "sk-test",
            "models": [{"id": "gpt-5.1", "agentRuntime": {"id": "codex"}}]}}},
        "agents": {"defaults": {"model": "fake/gpt-5.1"}},
        "plugins": {
            "paths": [clawhost_tests::plugins_dir()],
            "allow": ["codex"],
            "cacheDir": clawhost_tests::cache_dir(),
            "cacheKeyFile": clawhost_tests::cache_key_file(),
            "entries": {"codex": {
                "grants": {"harness": true, "processes": {"app-server": {
                    "command": process.command, "args": process.args, "env": env, "cwd": process.cwd}}},
                "config": {"startTimeoutMs": 60000}
            }}
        }
    })
}

#[tokio::test]
async fn the_clawhost_binary_runs_and_chats_on_codex() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("clawhost.json");
    let cfg = clawhost_tests::gateway::config_json(&fake, dir.path(), composed(&fake, dir.path()));
    std::fs::write(&file, cfg.to_string()).unwrap();
    // `clawhost run`: one turn, its answer printed.
    fake.push(text_answer("msg_1", &["Run ", "on Codex."]));
    let run = tokio::process::Command::new(clawhost_tests::clawhost_bin())
        .arg("--config")
        .arg(&file)
        .args(["run", "hi"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("Run on Codex."), "{stdout}");
    // `clawhost chat`: a turn, then `/status` names the runtime and Codex.
    fake.push(text_answer("msg_2", &["Chat ", "on Codex."]));
    let (stdout, stderr) = clawhost_tests::chat(&file, "hello\n/status\n/quit\n").await;
    assert!(stdout.contains("Chat on Codex."), "{stdout}{stderr}");
    assert!(stdout.contains("Runtime: codex"), "{stdout}");
    assert!(stdout.contains("codex app-server 0.171.0"), "{stdout}");
}

#[tokio::test]
async fn the_gateway_runs_a_codex_turn_and_streams_it() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    // The same grant and route, through the composition root the gateway,
    // `clawhost run` and `chat` share (`AgentHost`).
    let extra = composed(&fake, dir.path());
    let gw = clawhost_tests::gateway::start(&fake, dir.path(), extra, "127.0.0.1:0").await;
    fake.push(text_answer("msg_g", &["Through ", "the gateway."]));
    let response = reqwest::Client::new()
        .post(gw.url("/v1/chat/completions"))
        .json(&json!({"model": "main", "stream": true,
                      "messages": [{"role": "user", "content": "hello"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    // The reply streamed as chunks, in order.
    let through = body.find("\"Through \"").expect(&body);
    let rest = body.find("\"the gateway.\"").expect(&body);
    assert!(through < rest, "{body}");
    gw.shutdown().await;
}

#[tokio::test]
async fn the_turn_hooks_gate_and_revise_codex_turns() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let hooks = |config: Value| {
        json!({"plugins": {"entries": {"context-hooks": {
            "hooks": {"allowConversationAccess": true}, "config": config}}}})
    };
    // before_agent_finalize: an answer without `banana` goes back to Codex
    // for one more pass, on the same thread; agent_turn_prepare's context
    // reaches Codex in the turn's input.
    let cfg = codex_config(
        &fake,
        dir.path(),
        hooks(json!({"mustMention": "banana", "turnContext": "mind the budget"})),
    );
    let (runner, runtimes) = codex_runner_with(cfg, &["context-hooks"]).await;
    fake.push(text_answer("msg_1", &["An apple."]));
    fake.push(text_answer("msg_2", &["A banana."]));
    let mut session = clawhost_runner::Session::new("s1", "main");
    let (outcome, _) = session_turn(
        &runner,
        &runtimes,
        &mut session,
        "fake/gpt-5.1",
        "name a fruit",
    )
    .await;
    assert_eq!(outcome.unwrap().answer, "A banana.");
    let first = fake.requests()[0].body["input"].to_string();
    assert!(
        first.contains(r"name a fruit\n\n[codex] mind the budget"),
        "{first}"
    );
    assert!(matches!(&*session.history[0], Message::User { text, .. } if text == "name a fruit"));
    let second = fake.requests()[1].body["input"].to_string();
    assert!(
        second.contains("An apple.") && second.contains("Please mention banana."),
        "Codex got the first pass and the reason on its thread: {second}"
    );
    assert_eq!(
        kinds(&session.history),
        ["user", "assistant", "user", "assistant"]
    );

    // before_agent_run: turns on `codex` are stopped before the app-server starts.
    let dir = tempfile::tempdir().unwrap();
    let cfg = codex_config(&fake, dir.path(), hooks(json!({"blockRuntime": "codex"})));
    let (runner, runtimes) = codex_runner_with(cfg, &["context-hooks"]).await;
    let seen = fake.requests().len();
    let mut session = clawhost_runner::Session::new("s2", "main");
    let (outcome, _) = session_turn(&runner, &runtimes, &mut session, "fake/gpt-5.1", "hi").await;
    let error = outcome.unwrap_err().to_string();
    assert!(
        error.contains("turns on `codex` are not allowed here"),
        "{error}"
    );
    assert_eq!(fake.requests().len(), seen);
    assert!(processes_of(&dir.path().join("codex-home")).is_empty());
}

#[tokio::test]
async fn codex_compacting_its_thread_fires_the_compaction_hooks_and_the_mirror_keeps_all() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = codex_config(&fake, dir.path(), json!({}));
    // Codex compacts before a turn once its last reply used more tokens
    // than this.
    let app_server = cfg.plugins.entries.get_mut("codex").unwrap();
    let grant = app_server.grants.processes.get_mut("app-server").unwrap();
    grant
        .args
        .extend(["-c".into(), "model_auto_compact_token_limit=1000".into()]);
    let (runner, runtimes) = codex_runner_with(cfg, &["context-hooks"]).await;
    fake.push(text_answer_using("msg_1", &["First answer."], 50_000));
    fake.push(text_answer("msg_2", &["Handoff summary."]));
    fake.push(text_answer("msg_3", &["Second answer."]));
    let mut session = clawhost_runner::Session::new("s1", "main");
    let mut events = Vec::new();
    for prompt in ["one", "two"] {
        let (outcome, ctx) =
            session_turn(&runner, &runtimes, &mut session, "fake/gpt-5.1", prompt).await;
        outcome.unwrap();
        events = ctx.events.snapshot();
    }
    // Codex summarized its thread itself (its compaction prompt went to the
    // model) and went on from the summary.
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body["input"].to_string().contains("COMPACTION"));
    assert!(requests[2].body["input"]
        .to_string()
        .contains("Handoff summary."));
    // The second turn reported it: the host's hooks fired, in order, with
    // the mirror's counts (nothing of the host's was summarized).
    let phases: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::NativeCompaction { phase } => Some(*phase),
            _ => None,
        })
        .collect();
    use clawhost_agent_core::NativeCompaction;
    assert_eq!(
        phases,
        [NativeCompaction::Started, NativeCompaction::Completed]
    );
    let logs: Vec<String> = runner
        .plugins()
        .plugin("context-hooks")
        .unwrap()
        .logs()
        .into_iter()
        .map(|l| l.message)
        .filter(|m| m.contains("compaction"))
        .collect();
    assert_eq!(
        logs,
        [
            "observed before_compaction compacting=0 of 3",
            "observed after_compaction compacted=0 of 3"
        ]
    );
    // The mirror keeps every message of both turns.
    assert_eq!(
        kinds(&session.history),
        ["user", "assistant", "user", "assistant"]
    );
}

#[tokio::test]
async fn turns_of_two_sessions_run_on_codex_at_once() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = codex_runner(codex_config(&fake, dir.path(), json!({}))).await;
    // The first turn's model reply is held until the second turn is done:
    // with one instance per plugin, the second would wait for the first.
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    fake.push(Reply::Held(
        Box::new(text_answer("msg_1", &["First."])),
        gate.clone(),
    ));
    fake.push(text_answer("msg_2", &["Second."]));
    let turn = |id: &'static str, prompt: &'static str| {
        let (runner, runtimes) = (&runner, &runtimes);
        async move {
            let mut session = clawhost_runner::Session::new(id, "main");
            let (outcome, _) =
                session_turn(runner, runtimes, &mut session, "fake/gpt-5.1", prompt).await;
            outcome.map(|o| o.answer)
        }
    };
    let second = async {
        eventually("the first turn's model request", || {
            fake.requests().len() == 1
        })
        .await;
        let answer = tokio::time::timeout(std::time::Duration::from_secs(60), turn("s2", "two"))
            .await
            .expect("the second session's turn ran while the first held the plugin");
        gate.notify_one();
        answer
    };
    let (first, second) = tokio::join!(turn("s1", "one"), second);
    assert_eq!(second.unwrap(), "Second.");
    assert_eq!(first.unwrap(), "First.");
}
