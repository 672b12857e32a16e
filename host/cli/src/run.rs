//! `clawhost run` and `clawhost models`: real turns against configured providers.

use std::path::Path;

use anyhow::{anyhow, Context};
use clawhost_agent_core::{Approvals, RunContext, TurnOutcome};
use clawhost_config::{AgentEntry, Config};
use clawhost_hooks::SessionEndReason;
use clawhost_llm::ModelRuntimes;
use clawhost_runner::{AgentHost, HostTurnError, PersistError, RunError, TurnReply, TurnRequest};

use crate::live::{Format, LivePrinter};
use crate::transcript::Theme;

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

/// What `clawhost run` was asked.
#[derive(Debug, Clone)]
pub struct RunArgs {
    /// Agent id.
    pub agent: String,
    /// Model ref overriding the agent's.
    pub model: Option<String>,
    /// The user message.
    pub message: String,
    /// Continue this stored session (default: a new one).
    pub session: Option<String>,
    /// Abort the turn after this long.
    pub timeout: Option<std::time::Duration>,
    /// Print run events as JSON lines.
    pub json: bool,
    /// Plugin packages under development, built and loaded beside the configured ones.
    pub dev_plugins: Vec<std::path::PathBuf>,
    /// Images attached to the message.
    pub images: Vec<clawhost_agent_core::Image>,
}

/// Run one turn in a stored session (a new one unless `--session`),
/// printing it as it happens. Ctrl-C or `--timeout` abort the turn; what it
/// had done is stored, marked aborted.
pub async fn run(config_path: &Path, args: RunArgs) -> anyhow::Result<()> {
    let agent = args.agent.as_str();
    let mut config = with_model(Config::load(config_path)?, agent, args.model.as_deref());
    let dev = crate::dev_plugins::build_all(&args.dev_plugins)?;
    crate::dev_plugins::apply(&dev, &mut config)?;
    let (host, reports) = AgentHost::start(config, None).await?;
    for line in reports
        .iter()
        .filter_map(|r| crate::dev_plugins::render_report(r, &dev))
    {
        esay!("{line}");
    }
    let generation = host
        .generation(agent)
        .ok_or_else(|| anyhow!("agent `{agent}` is not configured (agents.list)"))?;
    let runner = host.runner();
    if !args.json {
        say!(
            "agent {agent} · model {} · generation {}{}",
            generation.model,
            generation.number,
            args.session
                .as_ref()
                .map(|id| format!(" · session {id}"))
                .unwrap_or_default()
        );
    }
    let mut ctx = RunContext::new(agent, generation.model.clone());
    ctx.events = LivePrinter::sink(if args.json {
        Format::Json
    } else {
        Format::Text(Theme::default())
    });
    // Nobody watches: approval requests get the configured answer.
    ctx.approvals = Approvals::non_interactive(&runner.config().approvals);
    if let Some(id) = &args.session {
        host.store().open_read_only(agent, id)?;
        runner.start_session(id, agent, true).await;
    }
    let stop = abort_on_interrupt_or_timeout(ctx.cancel.clone(), args.timeout);
    let request = TurnRequest {
        agent: agent.into(),
        session: args.session.clone(),
        message: args.message.clone(),
        images: args.images.clone(),
        model: None,
    };
    let result = turn_then_end(&host, &ctx, &request).await;
    stop.abort();
    crate::live::end_open_line(&ctx.events);
    let reply = result.map_err(|e| match e {
        HostTurnError::Turn {
            session_id,
            error: PersistError::Run(RunError::Aborted),
        } => anyhow!("turn aborted; what it had done is stored in session {session_id}"),
        HostTurnError::Turn { session_id, error } => {
            anyhow!(error).context(format!("the turn failed (stored in session {session_id})"))
        }
        e => e.into(),
    })?;
    let usage = reply.outcome.usage;
    if args.json {
        crate::print_line(
            &serde_json::json!({
                "event": "turn_end",
                "session_id": reply.session_id,
                "iterations": reply.outcome.iterations,
                "usage": usage,
            })
            .to_string(),
        );
    } else {
        say!(
            "turn finished: {} model calls · {} input / {} output tokens · session {}",
            reply.outcome.iterations,
            usage.input_tokens,
            usage.output_tokens,
            reply.session_id
        );
    }
    Ok(())
}

/// Cancel `cancel` on Ctrl-C or after `timeout`; abort the returned task
/// when the turn is over.
pub fn abort_on_interrupt_or_timeout(
    cancel: tokio_util::sync::CancellationToken,
    timeout: Option<std::time::Duration>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let timeout = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = timeout => {}
        }
        cancel.cancel();
    })
}

/// One turn of `host`, then its session ends and the harnesses are disposed
/// (`run` and `demo` take this path: `AgentHost::run_turn`, as `chat` and
/// the gateway do).
pub async fn turn_then_end(
    host: &AgentHost,
    ctx: &RunContext,
    request: &TurnRequest,
) -> Result<TurnReply, HostTurnError> {
    let result = host.run_turn(request, ctx).await;
    let runner = host.runner();
    let id = match &result {
        Ok(reply) => Some(&reply.session_id),
        Err(HostTurnError::Turn { session_id, .. }) => Some(session_id),
        Err(_) => None,
    };
    if let Some(id) = id {
        runner
            .end_session(id, &request.agent, SessionEndReason::Quit)
            .await;
    }
    runner.harnesses().dispose_all().await;
    result
}

/// One turn in a new session of `host`, then the session ends (the demo's
/// turn).
pub async fn one_turn(
    host: &AgentHost,
    ctx: &RunContext,
    message: &str,
) -> Result<TurnOutcome, HostTurnError> {
    let request = TurnRequest {
        agent: ctx.agent_id.clone(),
        session: None,
        message: message.into(),
        images: Vec::new(),
        model: None,
    };
    turn_then_end(host, ctx, &request)
        .await
        .map(|reply| reply.outcome)
}

/// Print the catalog and auth of the current generation (`json`: one
/// document: the generation, each agent's model, each provider's auth
/// without its secret, the catalog).
pub fn models(config_path: &Path, json: bool) -> anyhow::Result<()> {
    let config = Config::load(config_path)?;
    let runtimes = ModelRuntimes::new();
    let set = runtimes
        .rebuild(&config)
        .context("building the model runtime generation")?;
    if json {
        let any = set.agents.values().next();
        let doc = serde_json::json!({
            "generation": set.number,
            "agents": set.agents.iter().map(|(id, g)| serde_json::json!({"id": id, "model": g.model})).collect::<Vec<_>>(),
            "auth": any.map(|g| g.auth.iter().map(|a| serde_json::json!({
                "provider": a.provider, "ready": a.ready(), "status": a.describe()
            })).collect::<Vec<_>>()),
            "catalog": any.map(|g| &g.catalog),
        });
        say!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
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
