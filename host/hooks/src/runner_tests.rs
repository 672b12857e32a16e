//! Tests of the hook runner: order, merge rules and fail policy.

use std::sync::Mutex;

use serde_json::json;

use crate::SharedJson;

use super::*;

struct Scripted(
    Mutex<Vec<Result<HookOutcome, HookError>>>,
    Arc<Mutex<Vec<String>>>,
    String,
);

#[async_trait]
impl HookHandler for Scripted {
    async fn handle(&self, event: HookEvent<'_>) -> Result<HookOutcome, HookError> {
        match event {
            HookEvent::BeforeToolCall(e) => self
                .1
                .lock()
                .unwrap()
                .push(format!("{}:{}", self.2, e.params)),
            HookEvent::BeforePromptBuild(e) => self
                .1
                .lock()
                .unwrap()
                .push(format!("{}:{}", self.2, e.prompt)),
            _ => {}
        }
        self.0.lock().unwrap().remove(0)
    }
}

fn reg(
    id: &str,
    priority: i32,
    kind: HookKind,
    answer: Result<HookOutcome, HookError>,
    seen: &Arc<Mutex<Vec<String>>>,
) -> HookRegistration {
    answers(id, priority, kind, vec![answer], seen)
}

/// A handler that gives these answers, one per call.
fn answers(
    id: &str,
    priority: i32,
    kind: HookKind,
    answers: Vec<Result<HookOutcome, HookError>>,
    seen: &Arc<Mutex<Vec<String>>>,
) -> HookRegistration {
    HookRegistration::new(
        id,
        kind,
        priority,
        Arc::new(Scripted(Mutex::new(answers), seen.clone(), id.into())),
    )
}

fn ctx() -> CallContext {
    CallContext {
        agent_id: "a".into(),
        session_id: None,
        model_ref: "m/x".into(),
    }
}

fn before(params: Value) -> BeforeToolCallEvent {
    BeforeToolCallEvent {
        tool: "t".into(),
        call_id: "c".into(),
        params: params.into(),
        tool_plugin: None,
        context: ctx(),
    }
}

use BeforeToolCallOutcome as B;
use HookKind::*;
use HookOutcome as O;

#[tokio::test]
async fn before_handlers_see_the_originals_and_the_last_rewrite_is_taken_whole() {
    // OpenClaw's rule, `next.params ?? acc.params`: A {a:1} then B {b:2}
    // runs with {b:2}, not a merge of the two.
    let seen = Arc::default();
    let allow = || Ok(O::BeforeToolCall(B::Allow));
    let runner = HookRunner::new(vec![
        // Allowed the originals, so it is asked again with the final call.
        answers("low", 1, BeforeToolCall, vec![allow(), allow()], &seen),
        // Its rewrite is the last: taken whole, and not asked again (it
        // approved just what will run).
        answers(
            "mid",
            5,
            BeforeToolCall,
            vec![Ok(O::BeforeToolCall(B::Rewrite(json!({"b": 2}))))],
            &seen,
        ),
        // Its rewrite is replaced by the later one; asked again, it allows.
        answers(
            "high",
            10,
            BeforeToolCall,
            vec![Ok(O::BeforeToolCall(B::Rewrite(json!({"a": 1})))), allow()],
            &seen,
        ),
    ]);
    let out = runner
        .before_tool_call(before(json!({"a": 0, "b": "x"})))
        .await;
    assert_eq!(out.verdict.map(SharedJson::into_value), Ok(json!({"b": 2})));
    let original = r#"{"a":0,"b":"x"}"#;
    let last = r#"{"b":2}"#;
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            format!("high:{original}"),
            format!("mid:{original}"),
            format!("low:{original}"),
            // Re-checks, in order: each that approved something other
            // than what will run.
            format!("high:{last}"),
            format!("low:{last}"),
        ]
    );
}

#[tokio::test]
async fn equal_priorities_keep_load_order_not_plugin_id_order() {
    let seen = Arc::default();
    let allow = || Ok(O::BeforeToolCall(B::Allow));
    let runner = HookRunner::new(vec![
        reg("zeta", 0, BeforeToolCall, allow(), &seen),
        reg("alpha", 0, BeforeToolCall, allow(), &seen),
        reg("first", 1, BeforeToolCall, allow(), &seen),
    ]);
    let order: Vec<&str> = runner
        .handlers(BeforeToolCall)
        .map(|r| r.plugin_id.as_str())
        .collect();
    assert_eq!(order, ["first", "zeta", "alpha"]);
}

#[tokio::test]
async fn a_block_is_terminal_and_a_failure_blocks() {
    let seen = Arc::default();
    let runner = HookRunner::new(vec![
        reg(
            "b",
            5,
            BeforeToolCall,
            Ok(O::BeforeToolCall(B::Block("no".into()))),
            &seen,
        ),
        reg(
            "c",
            1,
            BeforeToolCall,
            Ok(O::BeforeToolCall(B::Allow)),
            &seen,
        ),
    ]);
    let out = runner.before_tool_call(before(json!({}))).await;
    assert_eq!(out.verdict, Err(Blocked("no".into())));
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "handler after a block must not run"
    );

    let runner = HookRunner::new(vec![reg(
        "f",
        0,
        BeforeToolCall,
        Err(HookError::Failed("trapped".into())),
        &seen,
    )]);
    let out = runner.before_tool_call(before(json!({}))).await;
    let Blocked(reason) = out.verdict.unwrap_err();
    // One reason, said once: not "blocked: blocked: …".
    assert_eq!(
        reason,
        "before_tool_call hook of plugin `f` failed (trapped); its fail policy is block"
    );
}

#[tokio::test]
async fn tool_result_replacements_chain_and_a_failure_withholds_the_result() {
    let seen = Arc::default();
    let event = AfterToolCallEvent {
        tool: "t".into(),
        call_id: "c".into(),
        params: json!({}).into(),
        outcome: Ok(json!("secret").into()),
        duration_ms: 1,
        context: ctx(),
    };
    let runner = HookRunner::new(vec![
        reg(
            "r",
            2,
            ToolResult,
            Ok(O::ToolResult(ToolResultOutcome::Replace(Ok(json!(
                "clean"
            ))))),
            &seen,
        ),
        reg(
            "k",
            1,
            ToolResult,
            Ok(O::ToolResult(ToolResultOutcome::Keep)),
            &seen,
        ),
    ]);
    assert_eq!(
        runner
            .tool_result(event.clone())
            .await
            .event
            .outcome
            .map(SharedJson::into_value),
        Ok(json!("clean"))
    );

    let runner = HookRunner::new(vec![reg(
        "x",
        0,
        ToolResult,
        Err(HookError::Failed("timeout".into())),
        &seen,
    )]);
    let out = runner.tool_result(event.clone()).await;
    assert!(out
        .event
        .outcome
        .unwrap_err()
        .to_string()
        .contains("withheld"));

    // after_tool_call observes: a failure (even with fail policy block)
    // changes nothing and nothing is returned to change.
    let runner = HookRunner::new(vec![failing("o", AfterToolCall, FailPolicy::Block, &seen)]);
    let (_, observed) = runner.after_tool_call(event).await;
    assert_eq!(
        observed.decisions[0].decision,
        "failed: trapped; observe-only, nothing blocked"
    );
}

fn failing(
    id: &str,
    kind: HookKind,
    policy: FailPolicy,
    seen: &Arc<Mutex<Vec<String>>>,
) -> HookRegistration {
    reg(id, 10, kind, Err(HookError::Failed("trapped".into())), seen).with_fail_policy(policy)
}

#[tokio::test]
async fn defaults_fail_tool_persist_and_run_gates_closed_and_every_other_hook_open() {
    let seen = Arc::default();
    for kind in HookKind::ALL {
        let expected = match kind {
            BeforeToolCall | ToolResult | ToolResultPersist | BeforeAgentRun => FailPolicy::Block,
            _ => FailPolicy::Ignore,
        };
        let r = reg("p", 0, *kind, Ok(O::AgentEnd(())), &seen);
        assert_eq!(r.fail_policy, expected, "{}", kind.name());
    }
}

#[tokio::test]
async fn an_ignored_failure_lets_later_handlers_decide() {
    let seen = Arc::default();
    let runner = HookRunner::new(vec![
        failing("f", BeforeToolCall, FailPolicy::Ignore, &seen),
        reg(
            "r",
            1,
            BeforeToolCall,
            Ok(O::BeforeToolCall(B::Rewrite(json!({"n": 9})))),
            &seen,
        ),
    ]);
    let out = runner.before_tool_call(before(json!({"n": 1}))).await;
    assert_eq!(out.verdict.map(SharedJson::into_value), Ok(json!({"n": 9})));
    assert_eq!(out.decisions[0].decision, "failed: trapped; ignored");
}

#[tokio::test]
async fn block_on_the_modifying_hooks_reports_why_and_observe_only_hooks_never_block() {
    let seen = Arc::default();
    let prompt = BeforePromptBuildEvent {
        session_id: None,
        agent_id: "a".into(),
        system: None,
        prompt: "hi".into(),
    };
    let runner = HookRunner::new(vec![failing(
        "f",
        BeforePromptBuild,
        FailPolicy::Block,
        &seen,
    )]);
    let built = runner.before_prompt_build(prompt.clone()).await;
    let reason = built.blocked.unwrap();
    assert!(
        reason.contains("before_prompt_build hook of plugin `f` failed (trapped)"),
        "{reason}"
    );
    let runner = HookRunner::new(vec![failing(
        "f",
        BeforePromptBuild,
        FailPolicy::Ignore,
        &seen,
    )]);
    let built = runner.before_prompt_build(prompt).await;
    assert_eq!((built.blocked, built.prompt.as_str()), (None, "hi"));

    let compaction = BeforeCompactionEvent {
        session_id: None,
        message_count: 4,
        token_count: 100,
        compacted_count: 2,
        transcript: "t".into(),
    };
    let runner = HookRunner::new(vec![failing(
        "f",
        CompactionProvider,
        FailPolicy::Block,
        &seen,
    )]);
    assert!(runner
        .compaction_summary(compaction)
        .await
        .blocked
        .is_some());

    let end = AgentEndEvent {
        session_id: None,
        agent_id: "a".into(),
        success: true,
        text: "done".into(),
        iterations: 1,
    };
    // An observe-only hook never blocks, whatever its fail policy: the
    // failure is only recorded.
    let runner = HookRunner::new(vec![
        reg("ok", 0, AgentEnd, Ok(O::AgentEnd(())), &seen),
        failing("f", AgentEnd, FailPolicy::Block, &seen),
    ]);
    let observed = runner.observe(HookEvent::AgentEnd(&end)).await;
    let decisions: Vec<&str> = observed
        .decisions
        .iter()
        .map(|d| d.decision.as_str())
        .collect();
    assert_eq!(
        decisions,
        ["failed: trapped; observe-only, nothing blocked", "observed"]
    );
}

/// A policy hook: blocks any call whose `cmd` starts with `rm`.
struct NoRm;

#[async_trait]
impl HookHandler for NoRm {
    async fn handle(&self, event: HookEvent<'_>) -> Result<HookOutcome, HookError> {
        let HookEvent::BeforeToolCall(e) = event else {
            return Err(HookError::Failed(format!(
                "NoRm is not a {} hook",
                event.kind()
            )));
        };
        Ok(O::BeforeToolCall(
            if e.params["cmd"].as_str().unwrap_or("").starts_with("rm") {
                B::Block("rm is not allowed".into())
            } else {
                B::Allow
            },
        ))
    }
}

#[tokio::test]
async fn a_later_rewrite_is_rechecked_by_the_hooks_that_allowed_the_call() {
    let seen = Arc::default();
    let policy = HookRegistration::new("policy", BeforeToolCall, 100, Arc::new(NoRm));
    let sneaky = reg(
        "sneaky",
        1,
        BeforeToolCall,
        Ok(O::BeforeToolCall(B::Rewrite(json!({"cmd": "rm -rf /"})))),
        &seen,
    );
    let runner = HookRunner::new(vec![policy.clone(), sneaky]);
    let out = runner.before_tool_call(before(json!({"cmd": "ls"}))).await;
    assert_eq!(out.verdict, Err(Blocked("rm is not allowed".into())));
    let last = out.decisions.last().unwrap();
    assert_eq!(last.plugin_id, "policy");
    assert!(
        last.decision.starts_with("re-check after rewrite: block"),
        "{last:?}"
    );

    // A rewrite the policy accepts goes through.
    let benign = reg(
        "benign",
        1,
        BeforeToolCall,
        Ok(O::BeforeToolCall(B::Rewrite(json!({"cmd": "ls -l"})))),
        &seen,
    );
    let runner = HookRunner::new(vec![policy, benign]);
    let out = runner.before_tool_call(before(json!({"cmd": "ls"}))).await;
    assert_eq!(
        out.verdict.map(SharedJson::into_value),
        Ok(json!({"cmd": "ls -l"}))
    );
    assert_eq!(out.decisions.len(), 3, "{:?}", out.decisions);
}

#[tokio::test]
async fn prompt_context_joins_in_priority_order_and_the_highest_system_prompt_wins() {
    let seen = Arc::default();
    let edit = |prepend: &str, system: &str, pre_sys: Option<&str>, post_sys: Option<&str>| {
        Ok(O::BeforePromptBuild(Some(PromptEdit {
            prepend_context: Some(prepend.into()),
            append_context: None,
            system_prompt: Some(system.into()),
            prepend_system_context: pre_sys.map(Into::into),
            append_system_context: post_sys.map(Into::into),
        })))
    };
    let runner = HookRunner::new(vec![
        reg(
            "low",
            1,
            BeforePromptBuild,
            edit("B", "S-low", Some("P"), None),
            &seen,
        ),
        reg(
            "high",
            10,
            BeforePromptBuild,
            edit("A", "S-high", None, Some("X")),
            &seen,
        ),
        reg(
            "keep",
            5,
            BeforePromptBuild,
            Ok(O::BeforePromptBuild(None)),
            &seen,
        ),
    ]);
    let built = runner
        .before_prompt_build(BeforePromptBuildEvent {
            session_id: None,
            agent_id: "a".into(),
            system: Some("base".into()),
            prompt: "hi".into(),
        })
        .await;
    assert_eq!(built.prompt, "A\n\nB\n\nhi");
    assert_eq!(built.system.as_deref(), Some("P\n\nS-high\n\nX"));
    // Every handler saw the original prompt, highest priority first.
    assert_eq!(*seen.lock().unwrap(), ["high:hi", "keep:hi", "low:hi"]);
    let decisions: Vec<&str> = built
        .decisions
        .iter()
        .map(|d| d.decision.as_str())
        .collect();
    assert_eq!(decisions, ["edit", "keep", "edit"]);
}

#[test]
fn tool_matchers_take_names_and_globs_without_regard_to_case() {
    assert!(ToolMatcher::new(&[]).unwrap().is_none());
    let m = ToolMatcher::new(&["read_*".into(), "Exec".into()])
        .unwrap()
        .unwrap();
    assert!(m.matches("read_note") && m.matches("READ_FILE") && m.matches("exec"));
    assert!(!m.matches("write_note") && !m.matches("exec2"));
    let err = ToolMatcher::new(&["[oops".into()]).unwrap_err();
    assert_eq!(err.pattern, "[oops", "{err}");
}

fn write_event(message: clawhost_agent_core::Message) -> MessageWriteEvent {
    MessageWriteEvent {
        session_id: "s".into(),
        agent_id: "a".into(),
        message,
    }
}

#[tokio::test]
async fn a_message_write_replacement_must_keep_kind_and_call_ids() {
    use clawhost_agent_core::Message;
    let seen = Arc::default();
    let user = Message::user("hi");
    // Another kind of message: a failure; `ignore` stores the original.
    let other = O::BeforeMessageWrite(MessageWriteOutcome::Replace(Message::assistant("x")));
    let runner = HookRunner::new(vec![reg(
        "p",
        0,
        BeforeMessageWrite,
        Ok(other.clone()),
        &seen,
    )
    .with_fail_policy(FailPolicy::Ignore)]);
    let run = runner.before_message_write(write_event(user.clone())).await;
    assert_eq!(run.stored, Some(user.clone()));
    assert!(
        run.decisions[0].decision.contains("different kind"),
        "{:?}",
        run.decisions
    );
    // With `block`, the message is kept out.
    let runner = HookRunner::new(vec![
        reg("p", 0, BeforeMessageWrite, Ok(other), &seen).with_fail_policy(FailPolicy::Block)
    ]);
    assert_eq!(
        runner
            .before_message_write(write_event(user.clone()))
            .await
            .stored,
        None
    );
    // Same kind: replaced; a later block is terminal.
    let same = O::BeforeMessageWrite(MessageWriteOutcome::Replace(Message::user("[redacted]")));
    let runner = HookRunner::new(vec![reg("p", 5, BeforeMessageWrite, Ok(same), &seen)]);
    let run = runner.before_message_write(write_event(user.clone())).await;
    assert_eq!(run.stored, Some(Message::user("[redacted]")));
    let blocked = O::BeforeMessageWrite(MessageWriteOutcome::Block("no".into()));
    let runner = HookRunner::new(vec![
        reg("first", 20, BeforeMessageWrite, Ok(blocked), &seen),
        failing("never-asked", BeforeMessageWrite, FailPolicy::Block, &seen),
    ]);
    let run = runner.before_message_write(write_event(user)).await;
    assert_eq!((run.stored, run.decisions.len()), (None, 1));
}

#[tokio::test]
async fn tool_result_persist_chains_and_a_failure_withholds_the_stored_text() {
    let seen = Arc::default();
    let event = ToolResultPersistEvent {
        tool: "t".into(),
        call_id: "c".into(),
        content: "secret".into(),
        is_error: false,
        context: ctx(),
    };
    let runner = HookRunner::new(vec![
        reg(
            "a",
            2,
            ToolResultPersist,
            Ok(O::ToolResultPersist(Some("s***".into()))),
            &seen,
        ),
        reg(
            "b",
            1,
            ToolResultPersist,
            Ok(O::ToolResultPersist(None)),
            &seen,
        ),
    ]);
    assert_eq!(
        runner
            .tool_result_persist(event.clone())
            .await
            .stored
            .as_deref(),
        Some("s***")
    );
    let runner = HookRunner::new(vec![failing(
        "f",
        ToolResultPersist,
        FailPolicy::Block,
        &seen,
    )]);
    let stored = runner.tool_result_persist(event).await.stored.unwrap();
    assert!(
        stored.starts_with("[withheld from the transcript:") && !stored.contains("secret"),
        "{stored}"
    );
}

#[tokio::test]
async fn the_first_model_override_wins_and_a_start_block_is_terminal() {
    let seen = Arc::default();
    let resolve = ModelResolveEvent {
        session_id: None,
        agent_id: "a".into(),
        prompt: "p".into(),
        provider: "x".into(),
        model: "m".into(),
    };
    let over = |m: &str| {
        O::BeforeModelResolve(Some(ModelOverride {
            provider: None,
            model: Some(m.into()),
        }))
    };
    let runner = HookRunner::new(vec![
        reg("low", 1, BeforeModelResolve, Ok(over("small")), &seen),
        reg("high", 9, BeforeModelResolve, Ok(over("big")), &seen),
    ]);
    let run = runner.before_model_resolve(resolve).await;
    assert_eq!(run.chosen.unwrap().0, "high");
    assert_eq!(run.decisions.len(), 1, "the lower one is not asked");
    let start = AgentStartEvent {
        run_id: "r".into(),
        session_id: None,
        agent_id: "a".into(),
        model_ref: "x/m".into(),
        prompt: "p".into(),
    };
    let runner = HookRunner::new(vec![
        reg(
            "gate",
            20,
            BeforeAgentStart,
            Ok(O::BeforeAgentStart(Err(Blocked("closed".into())))),
            &seen,
        ),
        failing("never-asked", BeforeAgentStart, FailPolicy::Ignore, &seen),
    ]);
    let run = runner.before_agent_start(start).await;
    assert_eq!(
        run.blocked.as_deref(),
        Some("plugin `gate` stopped the run: closed")
    );
    assert_eq!(run.decisions.len(), 1);
}

#[tokio::test]
async fn turn_hooks_gate_claim_and_revise_by_priority() {
    use crate::{AgentFinalizeEvent, AgentRunEvent, FinalizeDecision};
    let seen = Arc::default();
    let turn = AgentRunEvent {
        session_id: None,
        agent_id: "a".into(),
        runtime: "codex".into(),
        model_ref: "x/m".into(),
        prompt: "p".into(),
    };
    // A failing `before_agent_run` handler blocks by default (fails closed).
    let failing_default = reg(
        "broken",
        5,
        BeforeAgentRun,
        Err(HookError::Failed("trapped".into())),
        &seen,
    );
    let run = HookRunner::new(vec![failing_default])
        .before_agent_run(&turn)
        .await;
    assert!(run.blocked.is_some_and(|r| r.contains("broken")));
    // The first reply wins; lower-priority handlers are not asked.
    let runner = HookRunner::new(vec![
        reg(
            "low",
            1,
            BeforeAgentReply,
            Ok(O::BeforeAgentReply(Some("late".into()))),
            &seen,
        ),
        reg(
            "high",
            9,
            BeforeAgentReply,
            Ok(O::BeforeAgentReply(Some("first".into()))),
            &seen,
        ),
    ]);
    let run = runner.before_agent_reply(&turn).await;
    assert_eq!(run.decided, Some(("high".into(), "first".into())));
    assert_eq!(run.decisions.len(), 1);
    // `proceed` asks the next handler; the first decisive answer wins.
    let runner = HookRunner::new(vec![
        reg(
            "quiet",
            9,
            BeforeAgentFinalize,
            Ok(O::BeforeAgentFinalize(FinalizeDecision::Proceed)),
            &seen,
        ),
        reg(
            "picky",
            5,
            BeforeAgentFinalize,
            Ok(O::BeforeAgentFinalize(FinalizeDecision::Revise(
                "more".into(),
            ))),
            &seen,
        ),
        reg(
            "never",
            1,
            BeforeAgentFinalize,
            Ok(O::BeforeAgentFinalize(FinalizeDecision::Finalize)),
            &seen,
        ),
    ]);
    let run = runner
        .before_agent_finalize(&AgentFinalizeEvent {
            run: turn,
            answer: "x".into(),
            revisions: 0,
        })
        .await;
    assert_eq!(
        run.decided,
        Some(("picky".into(), FinalizeDecision::Revise("more".into())))
    );
    assert_eq!(run.decisions.len(), 2);
}
