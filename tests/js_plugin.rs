//! A plugin written in JavaScript with the JS SDK (`plugins/js-word-tools`,
//! built by `plugins/build.sh` with jco's QuickJS backend): its tool and
//! hooks run, thrown errors become error results, 64-bit integers arrive as
//! numbers.

use clawhost_agent_core::{RunContext, ToolCallRequest, ToolError, ToolExecutor};
use clawhost_tests::{call_tool, config, json_of, runner_with};
use serde_json::json;

#[tokio::test]
async fn a_javascript_tool_and_hook_run_and_thrown_errors_are_results() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"js-word-tools": {"config": {"blockWords": ["secret"]}}}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["js-word-tools"]).await;
    let plugin = runner.plugins().plugin("js-word-tools").unwrap();
    assert_eq!(plugin.status().tools, ["js_shout"]);
    let ctx = RunContext::new("main", "scripted/test");
    let call = |args: serde_json::Value| ToolCallRequest {
        id: "c1".into(),
        name: "js_shout".into(),
        arguments: args,
    };
    let d = runner.dispatcher();
    let out = d
        .execute(&call(json!({"text": "hi", "times": 2})), &ctx)
        .await;
    assert_eq!(json_of(&out), json!({"shout": "HI HI"}));
    // A ToolError: invalid parameters; any other throw: a failed call.
    let out = d.execute(&call(json!({"text": " "})), &ctx).await;
    assert!(
        out.is_error && out.content.contains("invalid parameters: text is empty"),
        "{}",
        out.content
    );
    // The tool's typed error reaches the host case for case.
    let typed = call_tool(
        runner.plugins(),
        "js-word-tools",
        "js_shout",
        json!({"text": " "}),
    )
    .await
    .unwrap();
    assert!(
        matches!(&typed, Err(ToolError::InvalidParams(m)) if m.contains("text is empty")),
        "{typed:?}"
    );
    let typed = call_tool(
        runner.plugins(),
        "js-word-tools",
        "js_shout",
        json!({"text": "crash"}),
    )
    .await
    .unwrap();
    assert!(matches!(&typed, Err(ToolError::Failed(_))), "{typed:?}");
    let out = d.execute(&call(json!({"text": "crash"})), &ctx).await;
    assert!(
        out.is_error
            && out
                .content
                .contains("js_shout failed: TypeError: asked to crash"),
        "{}",
        out.content
    );
    // The hook: a block by config, and its own throw blocks the call.
    let out = d.execute(&call(json!({"text": "a secret"})), &ctx).await;
    assert!(
        out.is_error && out.content.contains("mention `secret`"),
        "{}",
        out.content
    );
    let out = d.execute(&call(json!({"text": "explode"})), &ctx).await;
    assert!(
        out.is_error
            && out
                .content
                .contains("before_tool_call threw Error: the hook itself failed"),
        "{}",
        out.content
    );
    let status = plugin.status();
    assert_eq!(status.state, clawhost_plugin_runtime::PluginState::Active);
    assert_eq!(status.instantiations, 1, "no throw trapped the instance");
    runner.start_session("s1", "main", false).await;
    let logs: Vec<String> = plugin.logs().into_iter().map(|l| l.message).collect();
    // `durationMs` is a u64 in WIT (a BigInt in the bindings): a number here.
    assert!(
        logs.iter()
            .any(|l| l == "observed after_tool_call js_shout ok=true ms=number"),
        "{logs:?}"
    );
    assert!(
        logs.iter().any(|l| l == "observed session_start s1"),
        "{logs:?}"
    );
}

#[tokio::test]
async fn javascript_persist_and_start_hooks_decide() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {
            "entries": {"js-word-tools": {"config": {"hideInTranscript": ["hunter2"], "stopWord": "halt"}}}
        }}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["js-word-tools"]).await;
    clawhost_tests::check_persist_and_start_hooks(&runner, "js-word-tools").await;
}

#[tokio::test]
async fn the_turn_hooks_of_a_javascript_plugin_decide() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({"plugins": {"entries": {"js-word-tools": {
            "hooks": {"allowConversationAccess": true},
            "config": {"cannedReplies": {"ping": "pong"}, "mustMention": "banana"}
        }}}}),
        dir.path(),
    );
    let runner = runner_with(cfg, &["js-word-tools"]).await;
    clawhost_tests::check_turn_hooks(&runner, "js-word-tools").await;
}

#[tokio::test]
async fn the_prepare_hooks_of_a_javascript_plugin_add_context_and_exec_variables() {
    clawhost_tests::check_prepare_hooks("js-word-tools").await;
}
