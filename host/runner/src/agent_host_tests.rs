//! The composition root on its own: sessions created when a turn runs,
//! refusals before anything is written, aborted turns stored, reload.

use clawhost_agent_core::RunContext;
use serde_json::json;

use super::*;

/// A config file in `dir` whose scripted model answers `done`, with
/// `system_prompt`, its plugin cache in `dir`.
fn write_config(dir: &std::path::Path, system_prompt: &str) -> PathBuf {
    let script = dir.join("script.json");
    std::fs::write(&script, json!([{"answer": "done"}]).to_string()).unwrap();
    let path = dir.join("clawhost.json");
    std::fs::write(
        &path,
        json!({
            "models": {"providers": {"scripted": {"api": "scripted", "script": script}}},
            "agents": {"defaults": {"model": "scripted/test", "systemPrompt": system_prompt}},
            "plugins": {"cacheDir": dir.join("cache"), "cacheKeyFile": dir.join("cache.key")},
        })
        .to_string(),
    )
    .unwrap();
    path
}

async fn host(dir: &std::path::Path) -> AgentHost {
    let path = write_config(dir, "be brief");
    let config = Config::load(&path).unwrap();
    AgentHost::start(config, Some(path)).await.unwrap().0
}

fn request(session: Option<&str>, message: &str) -> TurnRequest {
    TurnRequest {
        agent: "main".into(),
        session: session.map(str::to_string),
        message: message.into(),
        images: Vec::new(),
        model: None,
    }
}

#[tokio::test]
async fn a_turn_creates_its_session_when_it_runs_and_the_next_one_continues_it() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    assert!(host.store().list("main").unwrap().is_empty());
    let ctx = RunContext::new("main", "");
    let first = host.run_turn(&request(None, "one"), &ctx).await.unwrap();
    assert_eq!(first.outcome.answer, "done");
    let second = host
        .run_turn(&request(Some(&first.session_id), "two"), &ctx)
        .await
        .unwrap();
    assert_eq!(second.session_id, first.session_id);
    assert_eq!(
        second.session.history.len(),
        4,
        "{:?}",
        second.session.history
    );
    assert_eq!(host.store().list("main").unwrap().len(), 1);
}

#[tokio::test]
async fn an_unknown_agent_session_or_model_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let ctx = RunContext::new("main", "");
    let mut unknown_agent = request(None, "hi");
    unknown_agent.agent = "nobody".into();
    assert!(matches!(
        host.run_turn(&unknown_agent, &ctx).await,
        Err(HostTurnError::UnknownAgent(_))
    ));
    assert!(matches!(
        host.run_turn(&request(Some("no-such-session"), "hi"), &ctx)
            .await,
        Err(HostTurnError::Session(SessionError::NotFound { .. }))
    ));
    let mut unknown_model = request(None, "hi");
    unknown_model.model = Some("nowhere/none".into());
    assert!(matches!(
        host.run_turn(&unknown_model, &ctx).await,
        Err(HostTurnError::Model(_))
    ));
    assert!(host.store().list("main").unwrap().is_empty());
}

#[tokio::test]
async fn a_cancelled_turn_is_stored_with_the_users_message_and_marked_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let ctx = RunContext::new("main", "");
    ctx.cancel.cancel();
    let Err(HostTurnError::Turn { session_id, error }) =
        host.run_turn(&request(None, "never mind"), &ctx).await
    else {
        panic!("a cancelled turn fails");
    };
    assert!(matches!(error, PersistError::Run(crate::RunError::Aborted)));
    let stored = host.store().open_read_only("main", &session_id).unwrap();
    let text = serde_json::to_string(stored.entries()).unwrap();
    assert!(text.contains("never mind"), "{text}");
    assert!(text.contains("turn_aborted"), "{text}");
}

#[tokio::test]
async fn reload_publishes_config_and_runner_together_and_a_failed_one_keeps_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let before = host.runner();
    write_config(dir.path(), "be thorough");
    let report = host.reload().await.unwrap();
    assert_eq!(report.generation, 2);
    assert!(!Arc::ptr_eq(&before, &host.runner()));
    assert_eq!(
        host.runner().system_prompt("main").as_deref(),
        Some("be thorough")
    );
    assert_eq!(host.generation("main").unwrap().number, 2);
    assert!(host.last_reload_error().is_none());

    std::fs::write(dir.path().join("clawhost.json"), "{ broken").unwrap();
    assert!(host.reload().await.is_err());
    assert_eq!(host.generation("main").unwrap().number, 2);
    assert_eq!(
        host.runner().system_prompt("main").as_deref(),
        Some("be thorough")
    );
    assert!(host.last_reload_error().is_some());
    // The old generation serves on.
    let ctx = RunContext::new("main", "");
    let reply = host.run_turn(&request(None, "still"), &ctx).await.unwrap();
    assert_eq!(reply.outcome.answer, "done");
}
