//! The offline demo runs a whole turn with the example plugins.

use std::sync::Arc;

use clawhost::approve::ScriptedOperator;
use clawhost::demo::{demo_config, DEMO_MESSAGE};
use clawhost::run::one_turn;
use clawhost_agent_core::{Approvals, RunContext, TurnEvent};
use clawhost_runner::AgentHost;
use clawhost_tests::{cache_dir, plugins_dir};

/// The demo's host, its sessions in `sessions`.
async fn demo_host(
    mut config: clawhost_config::Config,
    sessions: &std::path::Path,
) -> (AgentHost, Vec<clawhost_plugin_runtime::LoadReport>) {
    config.plugins.cache_dir = Some(cache_dir());
    config.plugins.cache_key_file = Some(clawhost_tests::cache_key_file());
    config.sessions.dir = Some(sessions.to_path_buf());
    AgentHost::start(config, None).await.unwrap()
}

#[tokio::test]
async fn the_demo_turn_shows_a_tool_call_hook_decisions_and_an_answer() {
    let sessions = tempfile::tempdir().unwrap();
    let (config, _files) = demo_config(plugins_dir()).unwrap();
    let (host, reports) = demo_host(config, sessions.path()).await;
    let refused: Vec<_> = reports
        .iter()
        .filter(|r| r.result.is_err())
        .filter_map(|r| r.id.clone())
        .collect();
    assert_eq!(
        refused,
        vec![
            "acp",
            "noop",
            "codex",
            "context-hooks",
            "hello-tool",
            "js-noop",
            "js-word-tools",
            "plan-act",
            "py-noop",
            "py-word-tools",
            "escape",
            "hostile",
            "legacy-api",
            "misbehave",
            "policy-guard-v0-1",
            "policy-guard-v0-2-0",
            "policy-guard-v0-2-1",
            "policy-guard-v0-2-2"
        ]
    );
    let mut ctx = RunContext::new("main", "scripted/demo");
    ctx.approvals = Approvals(Arc::new(ScriptedOperator));
    // The path `clawhost demo` and `clawhost run` take.
    let out = one_turn(&host, &ctx, DEMO_MESSAGE).await.unwrap();
    let events = ctx.events.snapshot();
    let decisions: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::HookDecision {
                plugin, decision, ..
            } => Some((
                plugin.clone(),
                decision.split(':').next().unwrap().to_string(),
            )),
            _ => None,
        })
        .collect();
    let expected = [
        ("policy-guard", "rewrite"),
        ("redact-results", "keep"),
        ("policy-guard", "block"),
        ("policy-guard", "require approval (warning)"),
        ("redact-results", "replace"),
    ];
    assert_eq!(
        decisions,
        expected.map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert!(
        out.answer.contains("[REDACTED]") && !out.answer.contains("dana@example.com"),
        "{}",
        out.answer
    );
    assert!(!out.answer.contains("hunter2"));
    // The approval was asked and answered before the note was read.
    assert!(events.iter().any(|e| matches!(e,
        TurnEvent::Approval { plugin, tool, decision, .. }
            if plugin == "policy-guard" && tool == "read_note" && decision == "allow-once")));
}

/// Run one turn of `demo` (its config, made ready by `prepare`) with
/// `message`: the outcome and each tool result as (tool, is error).
async fn demo_turn(
    demo: clawhost::demo::Demo,
    message: &str,
    prepare: impl FnOnce(&mut clawhost_config::Config),
) -> (clawhost_agent_core::TurnOutcome, Vec<(String, bool)>) {
    let (mut config, _files) = clawhost::demo::config_of(demo, plugins_dir()).unwrap();
    prepare(&mut config);
    let sessions = tempfile::tempdir().unwrap();
    let (host, _) = demo_host(config, sessions.path()).await;
    let ctx = RunContext::new("main", "scripted/demo");
    let out = one_turn(&host, &ctx, message).await.unwrap();
    let results = ctx
        .events
        .snapshot()
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolResult { tool, is_error, .. } => Some((tool.clone(), *is_error)),
            _ => None,
        })
        .collect();
    (out, results)
}

#[tokio::test]
async fn the_languages_demo_runs_python_and_javascript_plugins_beside_rust() {
    use clawhost::demo::{Demo, LANGUAGES_MESSAGE};
    let (out, results) = demo_turn(Demo::Languages, LANGUAGES_MESSAGE, |_| {}).await;
    assert_eq!(
        results,
        [
            ("py_word_stats".to_string(), false),
            ("js_shout".to_string(), false),
            ("js_shout".to_string(), true),
            ("py_divide".to_string(), true),
        ]
    );
    assert!(
        out.answer.contains("HOOKS IN THREE LANGUAGES"),
        "{}",
        out.answer
    );
    assert!(
        out.answer
            .contains("js-word-tools: parameters mention `forbidden`"),
        "{}",
        out.answer
    );
    assert!(out.answer.contains("ZeroDivisionError"), "{}", out.answer);
}

#[tokio::test]
async fn the_coding_demo_fixes_a_failing_test_with_the_built_in_tools() {
    use clawhost::demo::{coding_workspace, Demo, CODING_MESSAGE};
    let mut workspace = None;
    let (out, results) = demo_turn(Demo::Coding, CODING_MESSAGE, |config| {
        workspace = Some(coding_workspace(config).unwrap());
    })
    .await;
    let workspace = workspace.unwrap();
    let expected = [
        ("find", false),
        ("read", false),
        ("exec", false),
        ("edit", false),
        ("exec", true), // `rm -rf`: blocked by policy-guard
        ("exec", false),
    ];
    assert_eq!(results, expected.map(|(t, e)| (t.to_string(), e)));
    assert!(
        out.answer.contains(r#""exitCode":0"#) && out.answer.contains("OK"),
        "{}",
        out.answer
    );
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
}
