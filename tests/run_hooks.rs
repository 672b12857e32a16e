//! The hooks around a run, through real plugins: `before_model_resolve`,
//! `before_agent_start`, `agent_turn_prepare`, `resolve_exec_env`,
//! `llm_input` fired without waiting, the model-call hooks, and the granted
//! compaction-provider seam.

use std::time::{Duration, Instant};

use clawhost_agent_core::{Message, RunContext, SharedMessage, TurnEvent};
use clawhost_llm::ModelRuntimes;
use clawhost_runner::{EmbeddedRunner, RunError, Session};
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, dispatch, json_of, runner_with, wire};
use serde_json::{json, Value};

struct Setup {
    fake: FakeProvider,
    runtimes: ModelRuntimes,
    runner: EmbeddedRunner,
    _dir: tempfile::TempDir,
}

/// A fake provider with models `m` and `big`, the agent on `fake/m`.
async fn setup(entries: Value, packages: &[&str]) -> Setup {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "plugins": {"entries": entries},
            "models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url(),
                "retry": {"maxAttempts": 1},
                "models": [{"id": "m", "contextWindow": 400}, {"id": "big", "contextWindow": 100000}]}}},
            "agents": {"defaults": {"model": "fake/m", "compaction": {"reserveTokens": 100, "keepRecentTokens": 60}}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, packages).await;
    Setup {
        fake,
        runtimes,
        runner,
        _dir: dir,
    }
}

impl Setup {
    async fn turn(
        &self,
        session: &mut Session,
        text: &str,
    ) -> (Result<String, RunError>, RunContext) {
        let ctx = RunContext::new("main", "fake/m");
        let out = self
            .runner
            .run_session_turn(session, self.runtimes.current("main").unwrap(), &ctx, text)
            .await
            .map(|o| o.answer);
        (out, ctx)
    }

    fn logs(&self, plugin: &str) -> Vec<String> {
        let p = self.runner.plugins().plugin(plugin).unwrap();
        p.logs().into_iter().map(|l| l.message).collect()
    }
}

#[tokio::test]
async fn before_model_resolve_moves_the_run_to_another_catalog_model() {
    let s = setup(
        json!({"context-hooks": {"config": {"model": "fake/big"}}}),
        &["context-hooks"],
    )
    .await;
    s.fake
        .push(Reply::sse(wire::chat_text(&["from big"], 3, 2)));
    let mut session = Session::new("s1", "main");
    let (answer, ctx) = s.turn(&mut session, "hi").await;
    assert_eq!(answer.unwrap(), "from big");
    assert_eq!(s.fake.requests()[0].body["model"], "big");
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. }
            if hook.name() == "before_model_resolve" && decision == "override: provider fake model big")));
    // The model-call hooks saw the call's metadata (no content).
    s.runner
        .end_session("s1", "main", clawhost_hooks::SessionEndReason::Quit)
        .await;
    let logs = s.logs("context-hooks");
    assert!(
        logs.iter()
            .any(|l| l.starts_with("observed model_call_started run-")
                && l.ends_with("fake/big api=openai-completions")),
        "{logs:#?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.starts_with("observed model_call_ended run-") && l.ends_with("ok=true")),
        "{logs:#?}"
    );
}

#[tokio::test]
async fn an_override_to_a_model_the_catalog_lacks_is_refused_and_the_run_keeps_its_model() {
    let s = setup(
        json!({"context-hooks": {"config": {"model": "fake/nope"}}}),
        &["context-hooks"],
    )
    .await;
    s.fake.push(Reply::sse(wire::chat_text(&["kept"], 3, 2)));
    let mut session = Session::new("s1", "main");
    let (answer, ctx) = s.turn(&mut session, "hi").await;
    assert_eq!(answer.unwrap(), "kept");
    assert_eq!(s.fake.requests()[0].body["model"], "m");
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. }
            if hook.name() == "before_model_resolve" && decision.starts_with("override refused"))));
}

#[tokio::test]
async fn before_agent_start_can_stop_a_run_before_any_model_call() {
    let s = setup(
        json!({"context-hooks": {"config": {"stopWord": "forbidden"}}}),
        &["context-hooks"],
    )
    .await;
    let mut session = Session::new("s1", "main");
    let (answer, _) = s.turn(&mut session, "do the forbidden thing").await;
    let err = answer.unwrap_err().to_string();
    assert!(
        err.contains("plugin `context-hooks` stopped the run: the message contains `forbidden`"),
        "{err}"
    );
    assert!(s.fake.requests().is_empty(), "no model call was made");
    // Another message runs.
    s.fake.push(Reply::sse(wire::chat_text(&["fine"], 3, 2)));
    let (answer, _) = s.turn(&mut session, "do the usual").await;
    assert_eq!(answer.unwrap(), "fine");
}

#[tokio::test]
async fn the_turn_hooks_gate_answer_and_revise_a_turn_on_the_built_in_loop() {
    let s = setup(
        json!({"context-hooks": {
            "hooks": {"allowConversationAccess": true},
            "config": {"cannedReplies": {"ping": "pong"}, "mustMention": "banana"}}}),
        &["context-hooks"],
    )
    .await;
    // before_agent_reply: a message it knows is answered without the model.
    let mut session = Session::new("s1", "main");
    let (answer, ctx) = s.turn(&mut session, "ping").await;
    assert_eq!(answer.unwrap(), "pong");
    assert!(s.fake.requests().is_empty(), "no model call was made");
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, plugin, decision, .. }
            if hook.name() == "before_agent_reply" && plugin == "context-hooks" && decision == "reply")));
    assert_eq!(session.history.len(), 2);
    // before_agent_finalize: an answer without `banana` goes back for one
    // more pass, whose reason is the turn's next message.
    s.fake
        .push(Reply::sse(wire::chat_text(&["an apple"], 3, 2)));
    s.fake
        .push(Reply::sse(wire::chat_text(&["a banana"], 3, 2)));
    let (answer, ctx) = s.turn(&mut session, "name a fruit").await;
    assert_eq!(answer.unwrap(), "a banana");
    let requests = s.fake.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body["messages"].to_string();
    assert!(
        second.contains("an apple") && second.contains("Please mention banana."),
        "{second}"
    );
    let texts: Vec<String> = session.history[2..]
        .iter()
        .map(|m| match &**m {
            Message::User { text, .. } => format!("user: {text}"),
            Message::Assistant { text, .. } => format!("assistant: {text}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        [
            "user: name a fruit",
            "assistant: an apple",
            "user: Please mention banana.",
            "assistant: a banana"
        ]
    );
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. }
            if hook.name() == "before_agent_finalize" && decision == "revise: Please mention banana.")));
    // The passes are bounded: an answer that never complies stands after
    // the last one.
    for _ in 0..=clawhost_runner::MAX_REVISIONS {
        s.fake
            .push(Reply::sse(wire::chat_text(&["a cherry"], 3, 2)));
    }
    let (answer, _) = s.turn(&mut session, "another fruit").await;
    assert_eq!(answer.unwrap(), "a cherry");
    assert_eq!(
        s.fake.requests().len(),
        2 + 1 + clawhost_runner::MAX_REVISIONS as usize
    );
}

#[tokio::test]
async fn before_agent_run_stops_a_turn_on_the_runtime_it_names() {
    let s = setup(
        json!({"context-hooks": {"config": {"blockRuntime": "openclaw"}}}),
        &["context-hooks"],
    )
    .await;
    let mut session = Session::new("s1", "main");
    let (answer, ctx) = s.turn(&mut session, "hello").await;
    let err = answer.unwrap_err().to_string();
    assert!(
        err.contains(
            "plugin `context-hooks` stopped the turn: turns on `openclaw` are not allowed here"
        ),
        "{err}"
    );
    assert!(s.fake.requests().is_empty());
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. }
            if hook.name() == "before_agent_run" && decision.starts_with("block"))));
    // Other runtimes' turns are not its business.
    let s2 = setup(
        json!({"context-hooks": {"config": {"blockRuntime": "codex"}}}),
        &["context-hooks"],
    )
    .await;
    s2.fake.push(Reply::sse(wire::chat_text(&["fine"], 3, 2)));
    let (answer, _) = s2.turn(&mut Session::new("s2", "main"), "hello").await;
    assert_eq!(answer.unwrap(), "fine");
}

#[tokio::test]
async fn agent_turn_prepare_adds_context_the_model_sees_and_the_transcript_does_not() {
    let entries = |allow: bool| {
        json!({"context-hooks": {
            "hooks": {"allowPromptInjection": allow},
            "config": {"turnContext": "mind the budget", "prepend": "P"}}})
    };
    let s = setup(entries(true), &["context-hooks"]).await;
    s.fake.push(Reply::sse(wire::chat_text(&["ok"], 3, 2)));
    let mut session = Session::new("s1", "main");
    let (answer, ctx) = s.turn(&mut session, "hello").await;
    assert_eq!(answer.unwrap(), "ok");
    // Prepared first (with the runtime's id), then before_prompt_build's
    // context around what agent_turn_prepare left.
    let sent = s.fake.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains(r"P\n\nhello\n\n[openclaw] mind the budget"),
        "{sent}"
    );
    assert!(matches!(&*session.history[0], Message::User { text, .. } if text == "hello"));
    assert!(ctx.events.snapshot().iter().any(|e| matches!(e,
        TurnEvent::HookDecision { hook, decision, .. }
            if hook.name() == "agent_turn_prepare" && decision == "edit")));
    // `hooks.allowPromptInjection: false` withholds it with before_prompt_build.
    let s = setup(entries(false), &["context-hooks"]).await;
    s.fake.push(Reply::sse(wire::chat_text(&["ok"], 3, 2)));
    let (answer, _) = s.turn(&mut Session::new("s2", "main"), "hello").await;
    assert_eq!(answer.unwrap(), "ok");
    let sent = s.fake.requests()[0].body["messages"].to_string();
    assert!(
        !sent.contains("mind the budget") && !sent.contains(r"P\n"),
        "{sent}"
    );
}

/// What `env` prints for `names` in an `exec` command run through the
/// dispatch path, with context-hooks setting `vars` under `grant`.
/// (Each printed as `NAME=value`, `NAME=unset` when it is not set.)
async fn exec_env(grant: Value, vars: Value, names: &[&str]) -> (Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "tools": {"exec": {"allow": ["*"]}},
            "agents": {"defaults": {"workspace": dir.path()}},
            "plugins": {"entries": {"context-hooks": {
                "grants": {"execEnv": grant}, "config": {"execEnv": vars}}}}
        }),
        dir.path(),
    );
    let runner = runner_with(cfg, &["context-hooks"]).await;
    let printed: Vec<String> = names
        .iter()
        .map(|n| format!("\"{n}=${{{n}-unset}}\""))
        .collect();
    let command = format!("printf '%s\\n' {}", printed.join(" "));
    let (out, ctx) = dispatch(&runner, "exec", json!({"command": command})).await;
    let result = json_of(&out);
    let stdout = result["stdout"].as_str().unwrap().trim().to_string();
    let decisions = ctx
        .events
        .snapshot()
        .iter()
        .filter_map(|e| match e {
            TurnEvent::HookDecision { hook, decision, .. } if hook.name() == "resolve_exec_env" => {
                Some(decision.clone())
            }
            _ => None,
        })
        .collect();
    (stdout.lines().map(str::to_string).collect(), decisions)
}

#[tokio::test]
async fn resolve_exec_env_sets_only_the_granted_names_of_an_exec_command() {
    let vars = json!({
        "TL_SESSION": "s-{command}", "TRACE_ID": "t1", "OTHER": "o",
        "LD_PRELOAD": "/tmp/evil.so", "BASH_ENV": "/tmp/evil.sh", "PATH": "/nowhere"
    });
    let names = ["TL_SESSION", "TRACE_ID", "OTHER", "LD_PRELOAD", "BASH_ENV"];
    let (printed, decisions) = exec_env(
        json!(["TL_*", "TRACE_ID", "LD_PRELOAD", "BASH_ENV", "PATH"]),
        vars.clone(),
        &names,
    )
    .await;
    // The command's own text reached the hook; a name outside the grant,
    // and the loader's and shell's start-up variables (granted or not),
    // are not set.
    assert!(
        printed[0].starts_with("TL_SESSION=s-printf '%s"),
        "{printed:?}"
    );
    assert_eq!(
        printed[1..],
        [
            "TRACE_ID=t1",
            "OTHER=unset",
            "LD_PRELOAD=unset",
            "BASH_ENV=unset"
        ]
    );
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert!(decisions[0].starts_with("set "), "{decisions:?}");
    // PATH stays the host's: the command still finds `echo` (it ran).
    // Without a grant the hook is not delivered at all.
    let (printed, decisions) = exec_env(json!([]), vars, &names[..2]).await;
    assert_eq!(printed, ["TL_SESSION=unset", "TRACE_ID=unset"]);
    assert!(decisions.is_empty(), "{decisions:?}");
}

#[tokio::test]
async fn llm_input_is_fired_without_waiting_so_a_slow_observer_never_delays_the_run() {
    // misbehave's llm_input never returns; its deadline is 2.5 s.
    let s = setup(
        json!({"misbehave": {"config": {"spinOn": "llm_input"},
            "hooks": {"allowConversationAccess": true, "timeouts": {"llm_input": 2500}}}}),
        &["test-misbehave"],
    )
    .await;
    s.fake.push(Reply::sse(wire::chat_text(&["quick"], 3, 2)));
    let mut session = Session::new("s1", "main");
    let started = Instant::now();
    let (answer, _) = s.turn(&mut session, "hi").await;
    let turn = started.elapsed();
    assert_eq!(answer.unwrap(), "quick");
    assert!(
        turn < Duration::from_millis(2000),
        "the turn waited: {turn:?}"
    );
    // The session's end lets it finish: its deadline stops it.
    s.runner
        .end_session("s1", "main", clawhost_hooks::SessionEndReason::Quit)
        .await;
    assert!(
        started.elapsed() >= Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
}

fn long_history() -> Vec<SharedMessage> {
    (0..6)
        .flat_map(|i| {
            [
                Message::user(format!("question {i}: {}", "words ".repeat(30))),
                Message::assistant(format!("answer {i}")),
            ]
        })
        .map(Into::into)
        .collect()
}

#[tokio::test]
async fn summaries_come_only_from_a_granted_compaction_provider() {
    for granted in [false, true] {
        let s = setup(
            json!({"context-hooks": {"config": {"summarize": true}, "grants": {"compaction": granted}}}),
            &["context-hooks"],
        )
        .await;
        if !granted {
            s.fake
                .push(Reply::sse(wire::chat_text(&["host summary"], 3, 2)));
        }
        s.fake.push(Reply::sse(wire::chat_text(&["answer"], 3, 2)));
        let mut session = Session::new("s1", "main");
        session.history = long_history();
        let (answer, _) = s.turn(&mut session, "next?").await;
        assert_eq!(answer.unwrap(), "answer");
        let Message::User { text, .. } = &*session.history[0] else {
            panic!("a summary first")
        };
        if granted {
            assert!(text.contains("context-hooks summary of"), "{text}");
            assert_eq!(s.fake.requests().len(), 1, "no summary model call");
        } else {
            assert!(text.contains("host summary"), "{text}");
            assert_eq!(s.fake.requests().len(), 2);
            let status = s.runner.plugins().plugin("context-hooks").unwrap().status();
            assert!(status
                .withheld
                .iter()
                .any(|(h, why)| h == "compaction_provider" && *why == "grants.compaction"));
        }
    }
}

#[tokio::test]
async fn the_context_engine_slot_picks_the_compaction_provider() {
    // Granted, but the slot gives compaction to the host (`legacy`).
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "plugins": {
                "slots": {"contextEngine": "legacy"},
                "entries": {"context-hooks": {"config": {"summarize": true}, "grants": {"compaction": true}}}
            },
            "models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url(),
                "retry": {"maxAttempts": 1}, "models": [{"id": "m", "contextWindow": 400}]}}},
            "agents": {"defaults": {"model": "fake/m", "compaction": {"reserveTokens": 100, "keepRecentTokens": 60}}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["context-hooks"]).await;
    let status = runner.plugins().plugin("context-hooks").unwrap().status();
    assert!(status
        .withheld
        .iter()
        .any(|(h, why)| h == "compaction_provider" && *why == "plugins.slots.contextEngine"));
    fake.push(Reply::sse(wire::chat_text(&["host summary"], 3, 2)));
    fake.push(Reply::sse(wire::chat_text(&["answer"], 3, 2)));
    let mut session = Session::new("s1", "main");
    session.history = long_history();
    let ctx = RunContext::new("main", "fake/m");
    runner
        .run_session_turn(
            &mut session,
            runtimes.current("main").unwrap(),
            &ctx,
            "next?",
        )
        .await
        .unwrap();
    let Message::User { text, .. } = &*session.history[0] else {
        panic!("a summary first")
    };
    assert!(text.contains("host summary"), "{text}");
}
