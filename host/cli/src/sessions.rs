//! `clawhost chat` (a persistent session on stdin/stdout) and `clawhost sessions`.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use clap::Subcommand;
use clawhost_agent_core::{Approvals, EventSink, RunContext};
use clawhost_config::Config;
use clawhost_hooks::SessionEndReason;
use clawhost_llm::ModelRuntimes;
use clawhost_runner::EmbeddedRunner;
use clawhost_sessions::SessionStore;

use crate::approve::TerminalApprover;
use crate::transcript::{render_entry, render_event_with, render_refusal, Theme};

/// `clawhost sessions` actions.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// List sessions, newest first.
    List,
    /// Print a session's entries.
    Show {
        /// Session id.
        id: String,
        /// The stored entries as JSON lines instead of a transcript.
        #[arg(long)]
        json: bool,
    },
    /// Cut a torn last line (left by an interrupted write) off a session,
    /// after copying the file to `<file>.bak-<millis>`.
    Repair {
        /// Session id.
        id: String,
    },
    /// Fork a session into a new one (up to an entry, default its last).
    Fork {
        /// Session id.
        id: String,
        /// Entry id to fork at.
        #[arg(long)]
        at: Option<String>,
    },
}

/// List, show or fork sessions.
pub fn manage(config_path: &Path, agent: &str, action: Action) -> anyhow::Result<()> {
    let config = Config::load(config_path)?;
    let store = SessionStore::new(config.sessions_dir());
    match action {
        Action::List => {
            for s in store.list(agent)? {
                say!(
                    "{}  {} entries  runtime {}  {}{}",
                    s.id,
                    s.entries,
                    s.runtime.as_deref().unwrap_or("-"),
                    s.title,
                    s.parent_session
                        .map(|p| format!("  (fork of {p})"))
                        .unwrap_or_default()
                );
            }
        }
        Action::Show { id, json } => {
            let t = store.open_read_only(agent, &id)?;
            for w in t.warnings() {
                esay!("warning: {w}");
            }
            for e in t.entries() {
                if json {
                    say!("{}", serde_json::to_string(e)?);
                } else {
                    say!("{}", render_entry(e));
                }
            }
        }
        Action::Repair { id } => match store.repair(agent, &id)? {
            Some(backup) => say!(
                "repaired {id}; the file before repair is {}",
                backup.display()
            ),
            None => say!("{id} needs no repair"),
        },
        Action::Fork { id, at } => {
            let fork = store.fork(agent, &id, at.as_deref())?;
            say!("{}", fork.id());
        }
    }
    Ok(())
}

/// Chat in a persistent session. `/<name> [text]` sends a prompt template
/// from the resource packages.
pub async fn chat(config_path: &Path, agent: &str, session: Option<String>) -> anyhow::Result<()> {
    let config = Config::load(config_path)?;
    let store = SessionStore::new(config.sessions_dir());
    let runtimes = ModelRuntimes::new();
    runtimes
        .rebuild(&config)
        .context("building the model runtime generation")?;
    let runtimes = Arc::new(runtimes);
    // Edits to the config file (or credentials appearing) publish a new
    // generation; each turn starts on the generation current at that time.
    let watcher = clawhost_llm::reload::watch(
        runtimes.clone(),
        config_path.to_path_buf(),
        std::time::Duration::from_secs(1),
    );
    let (runner, reports) = EmbeddedRunner::start(config).await?;
    for line in reports.iter().filter_map(render_refusal) {
        esay!("{line}");
    }
    let resumed = session.is_some();
    let mut id = match session {
        Some(id) => store.open(agent, &id)?.id().to_string(),
        None => store.create(agent, None)?.id().to_string(),
    };
    runner.start_session(&id, agent, resumed).await;
    let theme = runner
        .resources()
        .themes
        .first()
        .map(|(_, v)| Theme::from_json(v))
        .unwrap_or_default();
    say!("session {id} (type /new, /reset, /status or /quit)");
    // The approver reads its answers from the same lines, while a turn waits.
    let lines = crate::approve::stdin_lines();
    let approvals = Approvals(Arc::new(TerminalApprover::new(lines.clone())));
    let turn = Turn {
        runner: &runner,
        store: &store,
        agent,
        theme: &theme,
        approvals: &approvals,
    };
    loop {
        let Some(line) = lines.lock().await.recv().await else {
            break;
        };
        let generation = runtimes
            .current(agent)
            .ok_or_else(|| anyhow!("agent `{agent}` is not configured"))?;
        match line.trim() {
            "" => continue,
            "/quit" => break,
            "/new" => {
                runner.end_session(&id, agent, SessionEndReason::New).await;
                id = store.create(agent, None)?.id().to_string();
                runner.start_session(&id, agent, false).await;
                say!("session {id}");
            }
            "/reset" => {
                runner
                    .end_session(&id, agent, SessionEndReason::Reset)
                    .await;
                runner.reset_persisted(&store, agent, &id).await?;
                runner.start_session(&id, agent, false).await;
                say!("session {id} reset");
            }
            "/status" => {
                let session =
                    clawhost_runner::persist::session_of(&store.open_read_only(agent, &id)?);
                for l in runner.status(&session, &generation) {
                    say!("{l}");
                }
            }
            command if command.starts_with('/') => {
                let (name, rest) = command[1..].split_once(' ').unwrap_or((&command[1..], ""));
                let Some(template) = runner.resources().prompts.iter().find(|p| p.name == name)
                else {
                    say!("unknown command /{name}: use /new, /reset, /status, /quit or a prompt template");
                    continue;
                };
                let text = format!("{}\n{rest}", template.text.trim_end())
                    .trim_end()
                    .to_string();
                turn.send(&id, generation, &text).await;
            }
            text => turn.send(&id, generation, text).await,
        }
    }
    runner.end_session(&id, agent, SessionEndReason::Quit).await;
    runner.harnesses().dispose_all().await;
    watcher.abort();
    Ok(())
}

/// What a chat turn runs against.
struct Turn<'a> {
    runner: &'a EmbeddedRunner,
    store: &'a SessionStore,
    agent: &'a str,
    theme: &'a Theme,
    approvals: &'a Approvals,
}

impl Turn<'_> {
    /// Run one chat turn, printing the transcript as it goes.
    async fn send(
        &self,
        id: &str,
        generation: Arc<clawhost_llm::ModelRuntimeGeneration>,
        text: &str,
    ) {
        let mut ctx = RunContext::new(self.agent, generation.model.clone());
        let theme = self.theme.clone();
        ctx.events = EventSink::with_listener(move |e| say!("{}", render_event_with(e, &theme)));
        ctx.approvals = self.approvals.clone();
        if let Err(e) = self
            .runner
            .run_persisted_turn(self.store, self.agent, id, generation, &ctx, text)
            .await
        {
            say!("error: {e}");
        }
    }
}
