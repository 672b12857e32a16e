//! The `acp` runtime against a real ACP agent: Zed's `codex-acp` (npm
//! `@zed-industries/codex-acp`, pinned in `support/npm.rs`), whose model is a
//! fake OpenAI Responses server on loopback. The ACP client is the sandboxed
//! `plugins/acp`; the agent is the process the operator granted it.

use std::path::Path;

use clawhost_agent_core::{Message, RunContext, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::EmbeddedRunner;
use clawhost_sessions::{EntryBody, SessionStore};
use clawhost_tests::agents::{
    abort_midway, fake_model_args, host_tools_config, kill_midway, kinds, localize_process, merge,
    namespaced_tool_call, readme_config, text_answer, tool_call, CodexDirs,
};
use clawhost_tests::fake_provider::FakeProvider;
use clawhost_tests::{clawhost_bin, config, npm, runner_with};
use serde_json::{json, Value};

/// What the tests add to `codex-acp`'s command line: a model with metadata
/// (so no warning joins the reply), and an approval policy that asks.
fn agent_args() -> Vec<String> {
    [
        "-c",
        "model=\"gpt-5.4\"",
        "-c",
        "approval_policy=\"untrusted\"",
    ]
    .map(String::from)
    .to_vec()
}

/// A granted `codex-acp`, its model provider the fake, its home and
/// workspace under `dir`; the host's route `agent/codex` selects `acp`.
fn acp_config(fake: &FakeProvider, dir: &Path, extra: Value) -> clawhost_config::Config {
    config(acp_json(fake, dir, extra), dir)
}

/// [`acp_config`] as the config file's JSON.
fn acp_json(fake: &FakeProvider, dir: &Path, extra: Value) -> Value {
    let agent = npm::bin(npm::CODEX_ACP, "codex-acp");
    let dirs = CodexDirs::new(dir);
    let mut args = agent_args();
    args.extend(fake_model_args(fake));
    let workspace = &dirs.workspace;
    let mut cfg = json!({
        "models": {"providers": {"agent": {
            "baseUrl": format!("{}/v1", fake.url()), "api": "openai-responses", "apiKey": "unused",
            "models": [{"id": "codex", "agentRuntime": {"id": "acp"}}]
        }}},
        "agents": {"defaults": {"model": "agent/codex"}},
        "plugins": {"entries": {
            "acp": {
                "grants": {"harness": true, "processes": {"agent": {
                    "command": agent.to_string_lossy(),
                    "args": args,
                    "env": dirs.env(),
                    "cwd": workspace.to_string_lossy()
                }}},
                "config": {"cwd": workspace.to_string_lossy(), "providers": ["agent"],
                           "startTimeoutMs": 60000, "idleTimeoutMs": 60000}
            },
            "policy-guard": {"config": {"blockWords": ["keep.txt"]}}
        }},
        // The operator allowlisted `touch`, nothing else.
        "tools": {"exec": {"allow": ["touch"]}}
    });
    merge(&mut cfg, extra);
    cfg
}

async fn acp_runner(cfg: clawhost_config::Config) -> (EmbeddedRunner, ModelRuntimes) {
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["acp", "policy-guard"]).await;
    (runner, runtimes)
}

/// The commands of the agent's calls in a session's history.
fn commands(history: &[clawhost_agent_core::SharedMessage]) -> Vec<String> {
    history
        .iter()
        .filter_map(|m| match &**m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                Some(tool_calls[0].arguments["command"].as_str()?.to_string())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_acp_turn_asks_the_host_about_the_agents_commands_and_resumes_its_session() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let (runner, runtimes) = acp_runner(acp_config(&fake, dir.path(), json!({}))).await;
    let store = SessionStore::new(dir.path().join("sessions"));
    let id = store.create("main", None).unwrap().id().to_string();
    let generation = runtimes.current("main").unwrap();
    std::fs::write(workspace.join("keep.txt"), "precious").unwrap();
    std::fs::write(workspace.join("scratch.txt"), "scratch").unwrap();

    // Turn 1: the agent runs an allowlisted command, then answers in pieces.
    fake.push(tool_call(
        "call_1",
        "exec_command",
        json!({"cmd": "touch made-by-agent"}),
    ));
    fake.push(text_answer("msg_a", &["Made ", "it."]));
    let ctx = RunContext::new("main", "agent/codex");
    let (outcome, session) = runner
        .run_persisted_turn(&store, "main", &id, generation.clone(), &ctx, "make a file")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Made it.");
    assert_eq!(session.runtime.as_deref(), Some("acp"));
    assert!(workspace.join("made-by-agent").exists());
    let events = ctx.events.snapshot();
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "Made it.", "{events:#?}");
    // policy-guard saw the agent's command as `exec` (and let it through).
    assert!(events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, call_id, .. }
            if hook.name() == "before_tool_call" && plugin == "policy-guard" && call_id == "call_1")), "{events:#?}");
    // The mirror: the user, the command and its result, the answer.
    assert_eq!(
        kinds(&session.history),
        ["user", "tool-call", "tool-result", "assistant"]
    );
    assert_eq!(commands(&session.history), ["touch made-by-agent"]);
    let (thread, agent) = session
        .native_thread
        .clone()
        .expect("the session is stored");
    assert!(
        agent.contains("codex-acp") || agent.contains("Codex"),
        "{agent}"
    );
    let status = runner.status(&session, &generation).join("\n");
    assert!(status.contains("Runtime: acp"), "{status}");

    // Turn 2 in a new agent process: session/load continues the session (the
    // model sees turn 1 again); policy-guard blocks `rm keep.txt`, and this
    // agent ends its turn when a call is refused.
    fake.push(tool_call(
        "call_2",
        "exec_command",
        json!({"cmd": "rm keep.txt"}),
    ));
    let ctx = RunContext::new("main", "agent/codex");
    let error = runner
        .run_persisted_turn(
            &store,
            "main",
            &id,
            generation.clone(),
            &ctx,
            "remove keep.txt",
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("refused its `exec` call") && error.contains("blocked"),
        "{error}"
    );
    assert!(workspace.join("keep.txt").exists());
    let events = ctx.events.snapshot();
    assert!(
        events.iter().any(|e| matches!(e,
        TurnEvent::HookDecision { plugin, call_id, decision, .. }
            if plugin == "policy-guard" && call_id == "call_2" && decision.starts_with("block"))),
        "{events:#?}"
    );
    let second = fake.requests().last().unwrap().body["input"].to_string();
    assert!(
        second.contains("make a file") && second.contains("remove keep.txt"),
        "{second}"
    );

    // Turn 3: a command nobody approves (no operator: approvals deny).
    fake.push(tool_call(
        "call_3",
        "exec_command",
        json!({"cmd": "rm scratch.txt"}),
    ));
    let ctx = RunContext::new("main", "agent/codex");
    let error = runner
        .run_persisted_turn(&store, "main", &id, generation, &ctx, "remove scratch.txt")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("asked for approval"), "{error}");
    assert!(workspace.join("scratch.txt").exists());
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::Approval { call_id, tool, .. } if call_id == "call_3" && tool == "exec")));
    let t = store.open("main", &id).unwrap();
    let threads: Vec<&Value> = t
        .entries()
        .iter()
        .filter_map(|e| match &e.body {
            EntryBody::Custom { custom_type, data } if custom_type == "native_thread" => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(threads.len(), 1, "one session, recorded once: {threads:?}");
    assert_eq!(threads[0]["thread"], thread.as_str());
}

#[tokio::test]
async fn an_aborted_acp_turn_stops_the_agent_and_is_stored_as_aborted() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = acp_runner(acp_config(&fake, dir.path(), json!({}))).await;
    let home = dir.path().join("codex-home");
    abort_midway(&fake, runner, &runtimes, (dir.path(), &home), "agent/codex").await;
}

#[tokio::test]
async fn an_agent_killed_mid_turn_fails_the_turn_and_keeps_what_completed() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (runner, runtimes) = acp_runner(acp_config(&fake, dir.path(), json!({}))).await;
    let home = dir.path().join("codex-home");
    // An allowlisted command that completes, then a reply that never comes.
    let first = tool_call("call_1", "exec_command", json!({"cmd": "touch made"}));
    let error = kill_midway(
        &fake,
        runner,
        &runtimes,
        (dir.path(), &home),
        ("agent/codex", first),
    )
    .await;
    assert!(error.contains("ACP agent"), "{error}");
}

#[tokio::test]
async fn the_readme_acp_config_runs_a_turn() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dirs = CodexDirs::new(dir.path());
    // The README's config, with only what is this machine's replaced: the
    // command's path, the agent's model endpoint, the variables' values, the
    // workspace.
    let mut cfg = readme_config("acp-config");
    let mut args = vec!["-c".to_string(), "model=\"gpt-5.4\"".to_string()];
    args.extend(fake_model_args(&fake));
    localize_process(
        &mut cfg,
        "acp",
        "agent",
        (&npm::bin(npm::CODEX_ACP, "codex-acp"), &args, dirs.env()),
        &dirs.workspace,
    );
    let workspace = &dirs.workspace;
    let acp = &mut cfg["plugins"]["entries"]["acp"]["config"];
    acp["cwd"] = json!(workspace.to_string_lossy());
    let (runner, runtimes) = acp_runner(config(cfg, dir.path())).await;
    fake.push(text_answer("msg_r", &["From ", "the README."]));
    let mut session = clawhost_runner::Session::new("s1", "main");
    let ctx = RunContext::new("main", "agent/codex");
    let outcome = runner
        .run_session_turn(&mut session, runtimes.current("main").unwrap(), &ctx, "hi")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "From the README.");
    assert_eq!(session.runtime.as_deref(), Some("acp"));
    // The agent was handed the turn's own tools (the host's among them).
    let tools = fake.requests()[0].body["tools"].to_string();
    assert!(
        tools.contains("mcp__clawhost") && tools.contains("web_fetch"),
        "{tools}"
    );
}

#[tokio::test]
async fn an_acp_agent_calls_clawhosts_tools_over_mcp_through_the_hosts_hooks() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let serve = host_tools_config(dir.path());
    let host_tools = json!({"plugins": {"entries": {"acp": {"config": {"hostTools": {
        "command": clawhost_bin(),
        "args": ["--config", serve, "mcp", "serve"]
    }}}}}});
    let (runner, runtimes) = acp_runner(acp_config(&fake, dir.path(), host_tools)).await;
    let generation = runtimes.current("main").unwrap();
    let mut session = clawhost_runner::Session::new("s1", "main");

    fake.push(namespaced_tool_call(
        "call_1",
        "mcp__clawhost",
        "word_count",
        json!({"text": "one two three"}),
    ));
    fake.push(namespaced_tool_call(
        "call_2",
        "mcp__clawhost",
        "word_count",
        json!({"text": "a forbidden word"}),
    ));
    fake.push(text_answer("msg_m", &["Counted."]));
    let ctx = RunContext::new("main", "agent/codex");
    let outcome = runner
        .run_session_turn(&mut session, generation, &ctx, "count words")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Counted.");
    let requests = fake.requests();
    // The agent was offered the WASM tool, and its answer reached the model.
    assert!(
        requests[0].body["tools"].to_string().contains("word_count"),
        "{}",
        requests[0].body["tools"]
    );
    // (Codex nests the MCP result's JSON text in its own: unescape it.)
    let second = requests[1].body["input"].to_string().replace('\\', "");
    assert!(
        second.contains(r#""words":3"#),
        "{}",
        &second[second.len().saturating_sub(2000)..]
    );
    // policy-guard's before_tool_call blocked the second call.
    let third = requests[2].body["input"].to_string();
    assert!(
        third.contains("blocked"),
        "{}",
        &third[third.len().saturating_sub(2000)..]
    );
    assert!(third.contains("forbidden"), "{third}");
    // The mirror holds both calls and their results.
    assert_eq!(
        kinds(&session.history),
        [
            "user",
            "tool-call",
            "tool-result",
            "tool-call",
            "tool-result",
            "assistant"
        ]
    );
    // `clawhost mcp serve` stored the calls as its client's session.
    let served = SessionStore::new(dir.path().join("mcp-sessions"));
    let listed = served.list("main").unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let stored = served.open("main", &listed[0].id).unwrap();
    let calls = stored
        .entries()
        .iter()
        .filter(|e| format!("{:?}", e.body).contains("word_count"))
        .count();
    assert!(calls >= 2, "{:?}", stored.entries());
}

#[tokio::test]
async fn the_clawhost_binary_chats_and_the_gateway_answers_on_acp() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    // The composition root the gateway, `clawhost run` and `chat` share,
    // with the plugins built from source.
    let plugins = json!({"plugins": {
        "paths": [clawhost_tests::plugins_dir()],
        "allow": ["acp", "policy-guard"],
        "cacheDir": clawhost_tests::cache_dir(),
        "cacheKeyFile": clawhost_tests::cache_key_file()
    }});
    let composed = acp_json(&fake, dir.path(), plugins);
    let file = dir.path().join("clawhost.json");
    let cfg = clawhost_tests::gateway::config_json(&fake, dir.path(), composed.clone());
    std::fs::write(&file, cfg.to_string()).unwrap();
    // `clawhost chat`: a turn, then `/status` names the runtime and the agent.
    fake.push(text_answer("msg_c", &["Chat ", "over ACP."]));
    let (stdout, stderr) = clawhost_tests::chat(&file, "hello\n/status\n/quit\n").await;
    assert!(stdout.contains("Chat over ACP."), "{stdout}{stderr}");
    assert!(stdout.contains("Runtime: acp"), "{stdout}");
    assert!(stdout.contains("Codex 0.16.0"), "{stdout}");
    // The gateway: the same runtime behind the OpenAI-compatible API.
    let gw = clawhost_tests::gateway::start(&fake, dir.path(), composed, "127.0.0.1:0").await;
    fake.push(text_answer("msg_g", &["Through ", "the gateway."]));
    let response = reqwest::Client::new()
        .post(gw.url("/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "hello"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"], "Through the gateway.",
        "{body}"
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn host_tools_of_the_turn_take_its_own_dispatch_path_and_approvals() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    // The host serves the turn's own tools over HTTP for the turn.
    let extra = json!({
        "agents": {"defaults": {"workspace": workspace}},
        "plugins": {"entries": {"acp": {"config": {"hostTools": "turn"}}}}
    });
    let cfg = acp_config(&fake, dir.path(), extra);
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["acp", "policy-guard", "text-tools"]).await;
    std::fs::write(workspace.join("seen-by-ls.txt"), "").unwrap();
    fake.push(namespaced_tool_call(
        "call_1",
        "mcp__clawhost",
        "word_count",
        json!({"text": "one two three"}),
    ));
    // `ls` is not allowlisted: the turn's approver is asked (the operator
    // of this run says yes), as for the built-in loop's own call.
    fake.push(namespaced_tool_call(
        "call_2",
        "mcp__clawhost",
        "exec",
        json!({"command": "ls"}),
    ));
    fake.push(namespaced_tool_call(
        "call_3",
        "mcp__clawhost",
        "word_count",
        json!({"text": "keep.txt is mine"}),
    ));
    fake.push(text_answer("msg_t", &["Done."]));
    let mut ctx = RunContext::new("main", "agent/codex");
    ctx.approvals = clawhost_agent_core::Approvals(std::sync::Arc::new(
        clawhost_agent_core::FixedApprover(clawhost_agent_core::ApprovalDecision::AllowOnce),
    ));
    let mut session = clawhost_runner::Session::new("s1", "main");
    let outcome = runner
        .run_session_turn(&mut session, runtimes.current("main").unwrap(), &ctx, "go")
        .await
        .unwrap();
    assert_eq!(outcome.answer, "Done.");
    let requests = fake.requests();
    let input = |i: usize| requests[i].body["input"].to_string().replace('\\', "");
    assert!(input(1).contains(r#""words":3"#), "{}", input(1));
    assert!(
        input(2).contains("seen-by-ls.txt"),
        "the approved `ls` ran: {}",
        input(2)
    );
    assert!(input(3).contains("blocked"), "{}", input(3));
    // The turn's own events: policy-guard's decisions on the served calls.
    let blocked = ctx.events.snapshot().into_iter().any(|e| matches!(e,
        TurnEvent::HookDecision { plugin, call_id, decision, .. }
            if plugin == "policy-guard" && call_id.starts_with("mcp-") && decision.starts_with("block")));
    assert!(blocked);
    // The host recorded each call (by its tool's name) and its result, once.
    let names: Vec<String> = session
        .history
        .iter()
        .filter_map(|m| match &**m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                Some(tool_calls[0].name.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(names, ["word_count", "exec", "word_count"]);
    assert_eq!(
        kinds(&session.history),
        [
            "user",
            "tool-call",
            "tool-result",
            "tool-call",
            "tool-result",
            "tool-call",
            "tool-result",
            "assistant"
        ]
    );

    // The next turn resumes the agent's session (`session/load`, a new
    // agent process) with the new turn's endpoint.
    fake.push(namespaced_tool_call(
        "call_4",
        "mcp__clawhost",
        "word_count",
        json!({"text": "four words right here"}),
    ));
    fake.push(text_answer("msg_u", &["Again."]));
    let (outcome, _) =
        clawhost_tests::session_turn(&runner, &runtimes, &mut session, "agent/codex", "again")
            .await;
    assert_eq!(outcome.unwrap().answer, "Again.");
    let last = fake.requests().last().unwrap().body["input"]
        .to_string()
        .replace('\\', "");
    assert!(last.contains(r#""words":4"#), "{last}");
    assert!(
        last.contains(r#""words":3"#),
        "the first turn is in the resumed session: {last}"
    );
}
