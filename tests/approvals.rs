//! `before_tool_call` approval requests (OpenClaw's `requireApproval`)
//! through real plugins: who is asked, what each answer does, timeouts,
//! `allow-always` for a session, and the ordering rules.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use clawhost_agent_core::{
    ApprovalDecision, Approvals, Approver, PendingApproval, RunContext, ToolCallRequest,
    ToolExecutor, ToolOutput, TurnEvent,
};
use clawhost_runner::EmbeddedRunner;
use clawhost_tests::{config, json_of, runner_with};
use serde_json::{json, Value};

/// An operator who answers every request the same way and remembers what was asked.
#[derive(Default)]
struct Operator {
    answer: Option<ApprovalDecision>,
    asked: Mutex<Vec<PendingApproval>>,
}

#[async_trait]
impl Approver for Operator {
    async fn decide(&self, pending: &PendingApproval) -> ApprovalDecision {
        self.asked.lock().unwrap().push(pending.clone());
        match self.answer {
            Some(answer) => answer,
            // Never answers: the host's timeout decides.
            None => std::future::pending().await,
        }
    }
}

fn operator(answer: Option<ApprovalDecision>) -> Arc<Operator> {
    Arc::new(Operator {
        answer,
        ..Operator::default()
    })
}

async fn runner(
    guard: Value,
    extra: Value,
    packages: &[&str],
) -> (EmbeddedRunner, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = json!({"policy-guard": {"config": guard}});
    if let (Some(e), Some(x)) = (entries.as_object_mut(), extra.as_object()) {
        e.extend(x.clone());
    }
    let cfg = config(json!({"plugins": {"entries": entries}}), dir.path());
    (runner_with(cfg, packages).await, dir)
}

async fn call(
    runner: &EmbeddedRunner,
    approver: Option<Arc<Operator>>,
    session: Option<&str>,
    tool: &str,
    args: Value,
) -> (ToolOutput, Vec<TurnEvent>) {
    let mut ctx = RunContext::new("main", "scripted/test");
    ctx.session_id = session.map(str::to_string);
    if let Some(a) = approver {
        ctx.approvals = Approvals(a);
    }
    let call = ToolCallRequest {
        id: "call_1".into(),
        name: tool.into(),
        arguments: args,
    };
    let out = runner.dispatcher().execute(&call, &ctx).await;
    (out, ctx.events.snapshot())
}

fn approval_event(events: &[TurnEvent]) -> Option<String> {
    events.iter().find_map(|e| match e {
        TurnEvent::Approval { decision, .. } => Some(decision.clone()),
        _ => None,
    })
}

#[tokio::test]
async fn the_operator_is_asked_and_allow_once_lets_the_call_run_with_the_frozen_params() {
    let (runner, _dir) = runner(
        json!({"approveTools": ["word_count"]}),
        json!({}),
        &["policy-guard", "text-tools"],
    )
    .await;
    let op = operator(Some(ApprovalDecision::AllowOnce));
    let (out, events) = call(
        &runner,
        Some(op.clone()),
        None,
        "word_count",
        json!({"text": "a b c"}),
    )
    .await;
    assert_eq!(json_of(&out)["words"], 3);
    let asked = op.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].plugin_id, "policy-guard");
    assert_eq!(asked[0].tool, "word_count");
    assert_eq!(asked[0].request.title, "Run `word_count`");
    assert_eq!(asked[0].params, json!({"text": "a b c"}));
    assert_eq!(
        asked[0].timeout,
        Duration::from_millis(120_000),
        "approvals.timeoutMs default"
    );
    assert_eq!(approval_event(&events).as_deref(), Some("allow-once"));
    // The plugin is told the answer (OpenClaw's onResolution).
    let logs = runner.plugins().plugin("policy-guard").unwrap().logs();
    assert!(
        logs.iter()
            .any(|l| l.message.contains("approval of word_count (call_1)")
                && l.message.contains("AllowOnce")),
        "{logs:?}"
    );
}

#[tokio::test]
async fn deny_no_operator_and_a_timeout_all_block_the_call() {
    let (runner, _dir) = runner(
        json!({"approveTools": ["word_count"], "approvalTimeoutMs": 50}),
        json!({}),
        &["policy-guard", "text-tools"],
    )
    .await;
    let args = json!({"text": "a b"});
    let (out, events) = call(
        &runner,
        Some(operator(Some(ApprovalDecision::Deny))),
        None,
        "word_count",
        args.clone(),
    )
    .await;
    assert!(
        out.is_error && out.content.contains("the answer was deny"),
        "{}",
        out.content
    );
    assert_eq!(approval_event(&events).as_deref(), Some("deny"));
    // No approver given: nobody can be asked, the request fails closed.
    let (out, _) = call(&runner, None, None, "word_count", args.clone()).await;
    assert!(
        out.is_error && out.content.contains("the answer was cancelled"),
        "{}",
        out.content
    );
    // An operator who never answers: the request's 50 ms run out.
    let started = std::time::Instant::now();
    let (out, events) = call(&runner, Some(operator(None)), None, "word_count", args).await;
    assert!(
        out.is_error && out.content.contains("the answer was timeout"),
        "{}",
        out.content
    );
    assert_eq!(approval_event(&events).as_deref(), Some("timeout"));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_timeout_allows_only_when_the_request_says_so() {
    let (runner, _dir) = runner(
        json!({"approveTools": ["word_count"], "approvalTimeoutMs": 50, "approvalOnTimeout": "allow"}),
        json!({}),
        &["policy-guard", "text-tools"],
    )
    .await;
    let (out, events) = call(
        &runner,
        Some(operator(None)),
        None,
        "word_count",
        json!({"text": "a b"}),
    )
    .await;
    assert_eq!(json_of(&out)["words"], 2);
    assert_eq!(approval_event(&events).as_deref(), Some("timeout"));
}

#[tokio::test]
async fn allow_always_stands_for_the_rest_of_the_session_only() {
    let (runner, _dir) = runner(
        json!({"approveTools": ["word_count"]}),
        json!({}),
        &["policy-guard", "text-tools"],
    )
    .await;
    let op = operator(Some(ApprovalDecision::AllowAlways));
    let args = json!({"text": "a"});
    for _ in 0..3 {
        let (out, _) = call(
            &runner,
            Some(op.clone()),
            Some("s1"),
            "word_count",
            args.clone(),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
    }
    assert_eq!(
        op.asked.lock().unwrap().len(),
        1,
        "asked once, then remembered"
    );
    let (_, events) = call(
        &runner,
        Some(op.clone()),
        Some("s1"),
        "word_count",
        args.clone(),
    )
    .await;
    assert_eq!(
        approval_event(&events).as_deref(),
        Some("allow-always (remembered)")
    );
    // Another session is asked again; so is s1 once it ended.
    call(
        &runner,
        Some(op.clone()),
        Some("s2"),
        "word_count",
        args.clone(),
    )
    .await;
    assert_eq!(op.asked.lock().unwrap().len(), 2);
    runner
        .end_session("s1", "main", clawhost_hooks::SessionEndReason::Quit)
        .await;
    call(&runner, Some(op.clone()), Some("s1"), "word_count", args).await;
    assert_eq!(op.asked.lock().unwrap().len(), 3);
}

/// `policy-guard` (priority 100) asks about `print`; `test-misbehave`, its
/// priority pinned by the operator, answers as `hook` says.
async fn ordered(misbehave_priority: i32, hook: &str, op: Arc<Operator>) -> (ToolOutput, String) {
    let (runner, _dir) = runner(
        json!({"approveTools": ["print"]}),
        json!({"misbehave": {"hooks": {"before_tool_call": {"priority": misbehave_priority}}}}),
        &["policy-guard", "test-misbehave"],
    )
    .await;
    let args = json!({"text": "original", "hook": hook, "patch_text": "patched"});
    let out = call(&runner, Some(op), None, "print", args).await.0;
    let printed = runner.plugins().plugin("misbehave").unwrap().logs();
    let printed = printed
        .iter()
        .map(|l| l.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (out, printed)
}

#[tokio::test]
async fn after_a_request_params_are_frozen_but_a_lower_priority_block_still_blocks() {
    // A lower-priority rewrite after the request is ignored: the operator
    // approves what will run.
    let op = operator(Some(ApprovalDecision::AllowOnce));
    let (out, printed) = ordered(10, "patch", op.clone()).await;
    assert!(!out.is_error, "{}", out.content);
    let asked = op.asked.lock().unwrap().clone();
    assert_eq!(asked[0].params["text"], "original");
    assert!(
        printed.contains("original") && !printed.contains("patched"),
        "{printed}"
    );
    // A lower-priority block is terminal: the operator is never asked.
    let op = operator(Some(ApprovalDecision::AllowOnce));
    let (out, _) = ordered(10, "block", op.clone()).await;
    assert!(
        out.is_error && out.content.contains("misbehave: asked to block"),
        "{}",
        out.content
    );
    assert!(op.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_first_request_wins() {
    // misbehave (pinned above policy-guard) asks first; policy-guard's
    // request is recorded and ignored; the operator is asked once.
    let op = operator(Some(ApprovalDecision::AllowOnce));
    let (out, _) = ordered(200, "approve", op.clone()).await;
    assert!(!out.is_error, "{}", out.content);
    let asked = op.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].plugin_id, "misbehave");
    assert_eq!(asked[0].request.title, "misbehave asks");
}
