//! `clawhost chat` (a persistent session on stdin/stdout) and `clawhost sessions`.

use std::path::Path;
use std::sync::Arc;

use anyhow::anyhow;
use clap::Subcommand;
use clawhost_agent_core::{Approvals, RunContext, Usage};
use clawhost_config::Config;
use clawhost_hooks::SessionEndReason;
use clawhost_runner::{
    AgentHost, EmbeddedRunner, HostTurnError, PersistError, RunError, TurnRequest,
};
use tokio_util::sync::CancellationToken;

use crate::approve::TerminalApprover;
use crate::live::{Format, LivePrinter};
use crate::transcript::{render_entry, Theme};

/// `clawhost sessions` actions.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// List sessions, newest first, with when each was last written.
    List {
        /// One JSON document (`{"object": "list", "data": [...]}`) instead
        /// of a line each.
        #[arg(long)]
        json: bool,
    },
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
    /// Write every session of every agent to stdout as JSON lines (each
    /// session's header, then its entries), for `sessions import`.
    Export {
        /// Read this store instead of the configured one: a directory of
        /// session files or a `postgres://` URL.
        #[arg(long)]
        store: Option<String>,
    },
    /// Read sessions written by `sessions export` from stdin into the store,
    /// ids and entries kept; sessions already there are left as they are.
    Import {
        /// Write to this store instead of the configured one: a directory
        /// of session files or a `postgres://` URL.
        #[arg(long)]
        store: Option<String>,
    },
}

/// List, show, fork, export or import sessions.
pub async fn manage(config_path: &Path, agent: &str, action: Action) -> anyhow::Result<()> {
    let mut config = Config::load(config_path)?;
    if let Action::Export { store: Some(s) } | Action::Import { store: Some(s) } = &action {
        crate::sessions_transfer::choose_store(&mut config, s);
    }
    let (store, moved) = clawhost_runner::open_store(&config).await?;
    if let Some(old) = moved {
        esay!(
            "sessions moved from {} to {}",
            old.display(),
            config.sessions_dir().display()
        );
    }
    match action {
        Action::Export { .. } => crate::sessions_transfer::export(&store)?,
        Action::Import { .. } => crate::sessions_transfer::import(&store)?,
        Action::List { json: true } => {
            let rows = store.list(agent)?;
            say!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({"object": "list", "data": rows}))?
            );
        }
        Action::List { json: false } => {
            for s in store.list(agent)? {
                let updated =
                    std::time::UNIX_EPOCH + std::time::Duration::from_millis(s.updated_at_ms);
                say!(
                    "{}  {}  {} entries  runtime {}  {}{}",
                    s.id,
                    httpdate::fmt_http_date(updated),
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

/// The chat commands, for `/help`.
const CHAT_HELP: &str = "\
/new              start a new session (created when you send its first message)
/reset            clear this session's context (its entries stay on disk)
/status           the session's model, runtime and why it was selected
/model [ref]      show the model, or run `provider/model` from now on
/image <file|url> attach an image (PNG, JPEG, GIF, WebP) to your next message
/usage            tokens used in this chat
/help             this list
/quit             leave (so does Ctrl-C or Ctrl-D at the prompt)
/<name> [text]    send a prompt template from the resource packages
Ctrl-C during a turn aborts the turn; what it had done is stored, marked aborted.";

/// Chat in a persistent session. `/<name> [text]` sends a prompt template
/// from the resource packages. Edits to the config file publish a new
/// generation (plugins reloaded too); a failed reload is reported and the
/// previous one keeps serving.
///
/// `dev_plugins` are packages under development: built first, loaded beside
/// the configured plugins, and rebuilt and reloaded when their sources change.
pub async fn chat(
    config_path: &Path,
    agent: &str,
    session: Option<String>,
    dev_plugins: &[std::path::PathBuf],
) -> anyhow::Result<()> {
    let mut config = Config::load(config_path)?;
    let config_seen = clawhost_llm::reload::fingerprint(config_path);
    let dev_sources = crate::dev_plugins::sources(dev_plugins);
    let dev = crate::dev_plugins::build_all(dev_plugins)?;
    crate::dev_plugins::apply(&dev, &mut config)?;
    let (host, reports) = AgentHost::start(config, Some(config_path.to_path_buf())).await?;
    let host = Arc::new(host.with_overlay(crate::dev_plugins::overlay(dev.clone())));
    for line in reports
        .iter()
        .filter_map(|r| crate::dev_plugins::render_report(r, &dev))
    {
        esay!("{line}");
    }
    let dev_dirs = dev.clone();
    let dev_watcher =
        (!dev.is_empty()).then(|| crate::dev_plugins::watch(host.clone(), dev, dev_sources));
    if host.generation(agent).is_none() {
        return Err(anyhow!("agent `{agent}` is not configured (agents.list)"));
    }
    let watcher = watch_config(
        host.clone(),
        config_path.to_path_buf(),
        config_seen,
        dev_dirs,
    );
    // The approver reads its answers from the same lines, while a turn waits.
    let lines = crate::input::Lines::stdin();
    let mut chat = Chat {
        host: &host,
        agent,
        id: None,
        model: None,
        usage: Usage::default(),
        theme: theme_of(&host.runner()),
        approvals: Approvals(Arc::new(TerminalApprover::new(lines.clone()))),
        images: Vec::new(),
    };
    if let Some(id) = session {
        let id = host.store().open_read_only(agent, &id)?.id().to_string();
        host.runner().start_session(&id, agent, true).await;
        say!("session {id} (type /help for commands)");
        chat.id = Some(id);
    } else {
        say!("new session (type /help for commands)");
    }
    let interrupts = Interrupts::listen();
    loop {
        let line = tokio::select! {
            input = lines.read("› ") => input,
            () = interrupts.idle() => None,
        };
        // End of input, or Ctrl-C at the prompt: leave.
        let Some(crate::input::Input::Line(line)) = line else {
            break;
        };
        match chat.command(line.trim()).await? {
            Flow::Go => {}
            Flow::Quit => break,
            Flow::Send(text) => chat.send(&text, &interrupts).await,
        }
    }
    if let Some(id) = &chat.id {
        host.runner()
            .end_session(id, agent, SessionEndReason::Quit)
            .await;
    }
    host.runner().harnesses().dispose_all().await;
    watcher.abort();
    if let Some(dev_watcher) = dev_watcher {
        dev_watcher.abort();
    }
    Ok(())
}

fn theme_of(runner: &EmbeddedRunner) -> Theme {
    runner
        .resources()
        .themes
        .first()
        .map(|(_, v)| Theme::from_json(v))
        .unwrap_or_default()
}

/// Reload the host when the config file or the credentials it finds differ
/// from `last`, as they were at load (checked every second); a reload that
/// fails is reported here, and the old generation serves on.
fn watch_config(
    host: Arc<AgentHost>,
    path: std::path::PathBuf,
    mut last: Option<clawhost_llm::reload::Fingerprint>,
    dev: Vec<std::path::PathBuf>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let now = clawhost_llm::reload::fingerprint(&path);
            if now == last {
                continue;
            }
            last = now;
            match host.reload().await {
                Ok(report) => {
                    esay!("config reloaded: generation {}", report.generation);
                    for line in report
                        .plugins
                        .iter()
                        .filter_map(|r| crate::dev_plugins::render_report(r, &dev))
                    {
                        esay!("{line}");
                    }
                }
                Err(e) => {
                    esay!("config reload failed, the previous configuration keeps serving: {e:#}")
                }
            }
        }
    })
}

/// Ctrl-C: aborts the running turn, or ends the chat at the prompt.
struct Interrupts {
    turn: Arc<std::sync::Mutex<Option<CancellationToken>>>,
    idle: Arc<tokio::sync::Notify>,
}

impl Interrupts {
    fn listen() -> Self {
        let turn: Arc<std::sync::Mutex<Option<CancellationToken>>> = Arc::default();
        let idle = Arc::new(tokio::sync::Notify::new());
        let (t, i) = (turn.clone(), idle.clone());
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                match clawhost_agent_core::lock(&t).take() {
                    Some(cancel) => cancel.cancel(),
                    None => i.notify_one(),
                }
            }
        });
        Self { turn, idle }
    }

    async fn idle(&self) {
        self.idle.notified().await
    }

    fn during(&self, cancel: Option<CancellationToken>) {
        *clawhost_agent_core::lock(&self.turn) = cancel;
    }
}

enum Flow {
    Go,
    Quit,
    Send(String),
}

/// One chat's state.
struct Chat<'a> {
    host: &'a AgentHost,
    agent: &'a str,
    /// The session; `None` until the first message is sent.
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    theme: Theme,
    approvals: Approvals,
    /// Images attached with `/image`, sent with the next message.
    images: Vec<clawhost_agent_core::Image>,
}

impl Chat<'_> {
    async fn command(&mut self, line: &str) -> anyhow::Result<Flow> {
        let agent = self.agent;
        let runner = self.host.runner();
        match line {
            "" => {}
            "/quit" | "/exit" => return Ok(Flow::Quit),
            "/help" => say!("{CHAT_HELP}"),
            "/new" => {
                if let Some(id) = self.id.take() {
                    runner.end_session(&id, agent, SessionEndReason::New).await;
                }
                say!("new session");
            }
            "/reset" => match &self.id {
                Some(id) => {
                    runner.end_session(id, agent, SessionEndReason::Reset).await;
                    runner.reset_persisted(self.host.store(), agent, id).await?;
                    runner.start_session(id, agent, false).await;
                    say!("session {id} reset");
                }
                None => say!("nothing to reset: no message sent yet"),
            },
            "/status" => {
                let generation = self.generation()?;
                let session = match &self.id {
                    Some(id) => clawhost_runner::persist::session_of(
                        &self.host.store().open_read_only(agent, id)?,
                    ),
                    None => clawhost_runner::Session::new("(not created yet)", agent),
                };
                for l in runner.status(&session, &generation) {
                    say!("{l}");
                }
            }
            "/usage" => say!(
                "{} input / {} output tokens in this chat",
                self.usage.input_tokens,
                self.usage.output_tokens
            ),
            "/model" => say!("model {}", self.generation()?.model),
            command if command.starts_with("/image ") => {
                let arg = command["/image ".len()..].trim();
                match crate::images::load(arg) {
                    Ok(_) if self.images.len() == clawhost_agent_core::MAX_IMAGES_PER_MESSAGE => {
                        say!("error: at most {} images per message", self.images.len())
                    }
                    Ok(image) => {
                        say!(
                            "image attached ({}); it goes with your next message",
                            crate::images::describe(&image)
                        );
                        self.images.push(image);
                    }
                    Err(e) => say!("error: {e:#}"),
                }
            }
            command if command.starts_with("/model ") => {
                let model = command["/model ".len()..].trim();
                match self.generation()?.registry.resolve(model) {
                    Ok(_) => {
                        self.model = Some(model.to_string());
                        say!("model {model} from now on");
                    }
                    Err(e) => say!("error: {e}"),
                }
            }
            command if command.starts_with('/') => {
                let (name, rest) = command[1..].split_once(' ').unwrap_or((&command[1..], ""));
                let Some(template) = runner.resources().prompts.iter().find(|p| p.name == name)
                else {
                    say!("unknown command /{name}: type /help for the commands");
                    return Ok(Flow::Go);
                };
                let text = format!("{}\n{rest}", template.text.trim_end());
                return Ok(Flow::Send(text.trim_end().to_string()));
            }
            text => return Ok(Flow::Send(text.to_string())),
        }
        Ok(Flow::Go)
    }

    /// The generation a turn would run on now, with `/model` applied.
    fn generation(&self) -> anyhow::Result<Arc<clawhost_llm::ModelRuntimeGeneration>> {
        let generation = self
            .host
            .generation(self.agent)
            .ok_or_else(|| anyhow!("agent `{}` is not configured", self.agent))?;
        Ok(match &self.model {
            Some(m) => Arc::new(generation.with_model(m.clone())),
            None => generation,
        })
    }

    /// Run one chat turn, printing it as it goes; Ctrl-C aborts it.
    async fn send(&mut self, text: &str, interrupts: &Interrupts) {
        let generation = match self.generation() {
            Ok(g) => g,
            Err(e) => return say!("error: {e}"),
        };
        let mut ctx = RunContext::new(self.agent, generation.model.clone());
        ctx.events = LivePrinter::sink(Format::Text(self.theme.clone()));
        ctx.approvals = self.approvals.clone();
        interrupts.during(Some(ctx.cancel.clone()));
        let request = TurnRequest {
            agent: self.agent.into(),
            session: self.id.clone(),
            message: text.into(),
            images: std::mem::take(&mut self.images),
            model: self.model.clone(),
        };
        let result = self.host.run_turn(&request, &ctx).await;
        interrupts.during(None);
        crate::live::end_open_line(&ctx.events);
        match result {
            Ok(reply) => {
                self.usage.add(reply.outcome.usage);
                if self.id.is_none() {
                    say!("session {}", reply.session_id);
                }
                self.id = Some(reply.session_id);
            }
            Err(HostTurnError::Turn { session_id, error }) => {
                self.id = Some(session_id);
                match error {
                    PersistError::Run(RunError::Aborted) => {
                        say!("turn aborted (stored, marked aborted)")
                    }
                    e => say!("error: {e}"),
                }
            }
            Err(e) => say!("error: {e}"),
        }
    }
}
