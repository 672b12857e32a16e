//! `clawhost run` and `clawhost models`: real turns against configured providers.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use clawhost_agent_core::{EventSink, RunContext, TurnOutcome};
use clawhost_config::{AgentEntry, Config};
use clawhost_hooks::SessionEndReason;
use clawhost_llm::{ModelRuntimeGeneration, ModelRuntimes};
use clawhost_runner::{EmbeddedRunner, RunError, Session};

use crate::transcript::{render_event, render_refusal};

fn with_model(mut config: Config, agent: &str, model: Option<&str>) -> Config {
    if let Some(model) = model {
        let listed = config.agents.list.is_empty();
        match config.agents.list.iter_mut().find(|a| a.id == agent) {
            Some(entry) => entry.model = Some(model.to_string()),
            None if listed => config.agents.defaults.model = model.to_string(),
            None => config.agents.list.push(AgentEntry {
                id: agent.into(),
                model: Some(model.into()),
                system_prompt: None,
                embedded_harness: None,
                workspace: None,
                tools: None,
            }),
        }
    }
    config
}

/// Run one turn and print the transcript.
pub async fn run(
    config_path: &Path,
    agent: &str,
    model: Option<&str>,
    message: &str,
) -> anyhow::Result<()> {
    let config = with_model(Config::load(config_path)?, agent, model);
    let runtimes = ModelRuntimes::new();
    runtimes
        .rebuild(&config)
        .context("building the model runtime generation")?;
    let generation = runtimes
        .current(agent)
        .ok_or_else(|| anyhow!("agent `{agent}` is not configured (agents.list)"))?;
    let (runner, reports) = EmbeddedRunner::start(config).await?;
    for line in reports.iter().filter_map(render_refusal) {
        esay!("{line}");
    }
    say!(
        "agent {agent} · model {} · generation {}",
        generation.model,
        generation.number
    );
    let mut ctx = RunContext::new(agent, generation.model.clone());
    ctx.events = EventSink::with_listener(|event| say!("{}", render_event(event)));
    // Nobody watches: approval requests get the configured answer.
    ctx.approvals = crate::approve::non_interactive(&runner.config().approvals);
    let outcome = one_turn(&runner, generation, &ctx, message).await?;
    say!(
        "turn finished: {} model calls · {} input / {} output tokens",
        outcome.iterations,
        outcome.usage.input_tokens,
        outcome.usage.output_tokens
    );
    Ok(())
}

/// One turn on a session that lives for this turn only (it is not saved):
/// runtime selection, every hook, compaction — the path `chat` takes, less
/// the transcript. `run` and `demo` both take it.
pub async fn one_turn(
    runner: &EmbeddedRunner,
    generation: Arc<ModelRuntimeGeneration>,
    ctx: &RunContext,
    message: &str,
) -> Result<TurnOutcome, RunError> {
    let agent = generation.agent_id.clone();
    let session_id = format!("run-{}", std::process::id());
    let mut session = Session::new(&session_id, &agent);
    let mut ctx = ctx.clone();
    ctx.session_id = Some(session_id.clone());
    runner.start_session(&session_id, &agent, false).await;
    let result = runner
        .run_session_turn(&mut session, generation, &ctx, message)
        .await;
    runner
        .end_session(&session_id, &agent, SessionEndReason::Quit)
        .await;
    runner.harnesses().dispose_all().await;
    result
}

/// Print the catalog and auth of the current generation.
pub fn models(config_path: &Path) -> anyhow::Result<()> {
    let config = Config::load(config_path)?;
    let runtimes = ModelRuntimes::new();
    let set = runtimes
        .rebuild(&config)
        .context("building the model runtime generation")?;
    say!("generation {}", set.number);
    for (id, g) in &set.agents {
        say!("agent {id}: model {}", g.model);
    }
    let Some(any) = set.agents.values().next() else {
        return Ok(());
    };
    for auth in &any.auth {
        say!("auth {}: {}", auth.provider, auth.describe());
    }
    for entry in &any.catalog {
        say!(
            "model {} · {} · context {} · max output {} · input {} · {}",
            entry.model_ref,
            entry.api,
            entry.context_window,
            entry.max_tokens,
            entry.input.join("+"),
            if entry.auth_ready {
                "ready"
            } else {
                "no credential"
            }
        );
    }
    Ok(())
}
