//! A plugin written in Python with the Python SDK (`plugins/py-word-tools`,
//! built by `plugins/build.sh` with componentize-py): its tools and hooks
//! run, and Python exceptions become error results, never traps.

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{
    ApprovalDecision, Approvals, Approver, PendingApproval, RunContext, ToolCallRequest,
    ToolExecutor,
};
use clawhost_tests::{config, json_of, runner_with};
use serde_json::json;

struct Once;

#[async_trait]
impl Approver for Once {
    async fn decide(&self, _pending: &PendingApproval) -> ApprovalDecision {
        ApprovalDecision::AllowOnce
    }
}

#[tokio::test]
async fn a_python_tool_and_hook_run_and_exceptions_are_results() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {
            "limits": {"callTimeoutMs": 10000},
            "entries": {"py-word-tools": {"config": {
                "blockWords": ["secret"], "approveTools": ["py_divide"],
                "hideInTranscript": ["hunter2"], "stopWord": "halt"
            }}}
        }}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["py-word-tools"]).await;
    let plugin = runner.plugins().plugin("py-word-tools").unwrap();
    let status = plugin.status();
    assert_eq!(status.tools, ["py_word_stats", "py_divide"]);
    // The schema came from the type hints: `text` required, `lowercase` not.
    let schema = &plugin.registration().tools[0].spec.parameters;
    assert_eq!(schema["required"], json!(["text"]));
    assert_eq!(schema["properties"]["lowercase"]["type"], "boolean");

    let mut ctx = RunContext::new("main", "scripted/test");
    ctx.approvals = Approvals(Arc::new(Once));
    let call = |name: &str, args: serde_json::Value| ToolCallRequest {
        id: "c1".into(),
        name: name.into(),
        arguments: args,
    };
    let d = runner.dispatcher();
    let out = d
        .execute(&call("py_word_stats", json!({"text": "A b a"})), &ctx)
        .await;
    assert_eq!(json_of(&out), json!({"words": 3, "distinct": 2}));
    // A ToolError the tool raises: an invalid-params result.
    let out = d
        .execute(&call("py_word_stats", json!({"text": "  "})), &ctx)
        .await;
    assert!(
        out.is_error && out.content.contains("text is empty"),
        "{}",
        out.content
    );
    // Any other exception: an error result, and the instance keeps serving.
    let out = d
        .execute(&call("py_divide", json!({"a": 1.0, "b": 0.0})), &ctx)
        .await;
    assert!(
        out.is_error && out.content.contains("ZeroDivisionError"),
        "{}",
        out.content
    );
    let out = d
        .execute(&call("py_divide", json!({"a": 9.0, "b": 2.0})), &ctx)
        .await;
    assert_eq!(json_of(&out), json!(4.5));
    // The hook: blocks by config, asks approval, and its own exception blocks.
    let out = d
        .execute(&call("py_word_stats", json!({"text": "a secret"})), &ctx)
        .await;
    assert!(
        out.is_error && out.content.contains("mention `secret`"),
        "{}",
        out.content
    );
    let out = d
        .execute(&call("py_word_stats", json!({"text": "boom"})), &ctx)
        .await;
    assert!(
        out.is_error && out.content.contains("before_tool_call raised RuntimeError"),
        "{}",
        out.content
    );
    let status = plugin.status();
    assert_eq!(status.state, clawhost_plugin_runtime::PluginState::Active);
    assert_eq!(
        status.instantiations, 1,
        "no exception trapped the instance"
    );
    runner.start_session("s1", "main", false).await;
    let logs: Vec<String> = plugin.logs().into_iter().map(|l| l.message).collect();
    assert!(
        logs.iter()
            .any(|l| l == "observed after_tool_call py_word_stats ok=true"),
        "{logs:?}"
    );
    assert!(
        logs.iter().any(|l| l == "observed session_start s1"),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.starts_with("approval of py_divide (c1): allow-once")),
        "{logs:?}"
    );
}

#[tokio::test]
async fn python_persist_and_start_hooks_decide() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {
            "limits": {"callTimeoutMs": 10000},
            "entries": {"py-word-tools": {"config": {"hideInTranscript": ["hunter2"], "stopWord": "halt"}}}
        }}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["py-word-tools"]).await;
    clawhost_tests::check_persist_and_start_hooks(&runner, "py-word-tools").await;
}

#[tokio::test]
async fn the_turn_hooks_of_a_python_plugin_decide() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"py-word-tools": {
            "hooks": {"allowConversationAccess": true},
            "config": {"cannedReplies": {"ping": "pong"}, "mustMention": "banana"}
        }}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["py-word-tools"]).await;
    clawhost_tests::check_turn_hooks(&runner, "py-word-tools").await;
}

#[tokio::test]
async fn the_prepare_hooks_of_a_python_plugin_add_context_and_exec_variables() {
    clawhost_tests::check_prepare_hooks("py-word-tools").await;
}
