//! `clawhost`: run agents whose tools, hooks and runtimes are sandboxed WebAssembly plugins.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "clawhost", version, about)]
struct Cli {
    /// Config file (JSON or JSON5); default: $CLAWHOST_CONFIG, else
    /// clawhost.json5 / clawhost.json here, else in ~/.config/clawhost/.
    #[arg(long, short, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the example plugins and run one whole turn offline with the scripted model.
    Demo {
        /// Use already built plugin packages from this directory instead of building.
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        /// The second demo: Python and JavaScript plugins beside a Rust one.
        #[arg(long, conflicts_with = "coding")]
        languages: bool,
        /// The third demo: the built-in tools fix a failing test in a small project.
        #[arg(long)]
        coding: bool,
    },
    /// Build the plugins in plugins/ from source into plugin packages.
    BuildPlugins {
        /// Output directory (default: target/plugins).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run one turn of an agent with the configured model (or `--model`).
    Run {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
        /// Model ref `provider/model`, overriding the agent's.
        #[arg(long)]
        model: Option<String>,
        /// Continue this stored session (default: a new one, whose id is printed).
        #[arg(long)]
        session: Option<String>,
        /// Abort the turn after this many seconds (as Ctrl-C does).
        #[arg(long)]
        timeout: Option<f64>,
        /// Print the run's events as JSON lines.
        #[arg(long)]
        json: bool,
        /// A plugin package under development: built, then loaded beside
        /// the configured plugins (repeatable).
        #[arg(long = "plugin", value_name = "DIR")]
        plugins: Vec<PathBuf>,
        /// Attach an image to the message: a PNG, JPEG, GIF or WebP file,
        /// or an https: URL (repeatable).
        #[arg(long = "image", value_name = "FILE|URL")]
        images: Vec<String>,
        /// The user message (`-`: read it from standard input).
        message: String,
    },
    /// Chat with an agent in a persistent session (`/new`, `/reset`, `/status`, `/quit`).
    Chat {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
        /// Resume this session (default: a new one).
        #[arg(long)]
        session: Option<String>,
        /// A plugin package under development: built, loaded beside the
        /// configured plugins, rebuilt and reloaded when its sources change
        /// (repeatable).
        #[arg(long = "plugin", value_name = "DIR")]
        plugins: Vec<PathBuf>,
    },
    /// Serve agents over HTTP: OpenAI-compatible chat completions, run
    /// events, sessions (loopback only unless gateway.auth.token is set).
    Gateway {
        /// Listen here instead of gateway.bind (default 127.0.0.1:18789).
        #[arg(long)]
        bind: Option<String>,
    },
    /// List, show, fork, export or import stored sessions.
    Sessions {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
        #[command(subcommand)]
        action: clawhost::sessions::Action,
    },
    /// Show the model catalog and auth status of the current generation.
    Models {
        /// One JSON document instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Check the config, each agent's model and provider credential, the
    /// plugins, the component cache and the guest toolchains.
    Doctor {
        /// One JSON document of findings instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script (`clawhost completions bash >
    /// ~/.local/share/bash-completion/completions/clawhost`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Check the config file, read, set or remove one key of it, or print
    /// its JSON Schema.
    Config {
        #[command(subcommand)]
        action: clawhost::config_cmd::Action,
    },
    /// MCP servers the agent uses as tool sources (`mcp list`).
    Mcp {
        #[command(subcommand)]
        action: clawhost::mcp::Action,
    },
    /// Plugin authoring: `plugin new <dir> --lang rust|python|js|ts`, `plugin build [dir]`.
    Plugin {
        #[command(subcommand)]
        action: PluginAction,
    },
    /// Load the configured plugins and show what loaded, what was refused
    /// and why (`plugins precompile`: compile them into the cache first).
    Plugins {
        #[command(subcommand)]
        action: Option<clawhost::plugins::Action>,
    },
}

#[derive(Subcommand)]
enum PluginAction {
    /// Write a new plugin package (a tool and a hook) that builds outside this repository.
    New {
        /// The package directory to create.
        dir: PathBuf,
        /// The language.
        #[arg(long, value_enum)]
        lang: clawhost::scaffold::Lang,
        /// Plugin id (default: the directory's name).
        #[arg(long)]
        id: Option<String>,
    },
    /// Build the package (Rust, Python, JavaScript or TypeScript, told by its
    /// files) and stage its component where its manifest says.
    Build {
        /// The package directory.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Build even when the package is up to date.
        #[arg(long)]
        force: bool,
    },
    /// Push the built package to an OCI registry (`oci://HOST/NAME:TAG`) in
    /// the WASM ecosystem's layout; prints the reference pinned to its digest.
    Publish {
        /// The package directory.
        dir: PathBuf,
        /// Where: `oci://REGISTRY/REPOSITORY:TAG`.
        target: String,
        /// How long the registry may stay silent, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 60)]
        registry_timeout: u64,
    },
}

/// Raise the soft open-files limit to the hard one: plugins may hold up to
/// `plugins.limits.maxHandles` handles each, and the host's own sockets and
/// transcripts must never be the ones starved.
fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

fn main() {
    raise_open_files_limit();
    // reqwest 0.13 (under the OTLP exporter and the MCP SDK) is built with
    // rustls and no crypto provider of its own: every client it builds
    // takes the process's, ring (what our reqwest 0.12 uses too).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    // One turn at a time (`run`, `chat`, `demo`, …) runs on one thread: the
    // turn, its model stream and its tool calls, with no hand-offs between
    // threads (the gateway bench measures the difference). The gateway
    // serves many sessions and uses every core.
    let runtime = match cli.command {
        Command::Gateway { .. } => tokio::runtime::Runtime::new(),
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(run(cli));
    // A guest stuck in blocking host I/O (a FIFO read, a slow disk) holds a
    // blocking thread past its deadline; the host must still exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    clawhost::telemetry::flush();
    if let Err(e) = result {
        clawhost::esay!("error: {}", describe(&e));
        std::process::exit(1);
    }
}

/// An error and its causes on one line, each said once: a library error
/// often repeats its source in its own message.
fn describe(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    // `CLAWHOST_LOG` (the older name) wins over `RUST_LOG`. Progress events
    // (compiles) are drawn by their own layer, never as log lines.
    let filter = tracing_subscriber::EnvFilter::try_from_env("CLAWHOST_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| "warn,clawhost_plugin_runtime::host=error,rmcp=error".into())
        .add_directive("clawhost::progress=off".parse()?);
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colour only on a terminal, and never with NO_COLOR set.
        .with_ansi(clawhost::styled_stderr())
        .with_filter(filter);
    let progress = clawhost::progress::ProgressLayer::new().with_filter(
        tracing_subscriber::filter::Targets::new()
            .with_target("clawhost::progress", tracing::Level::INFO),
    );
    tracing_subscriber::registry()
        .with(logs)
        .with(progress)
        .with(clawhost::telemetry::layer())
        .init();
    let config_path = || clawhost_config::locate(cli.config.as_deref());
    match cli.command {
        Command::Demo {
            plugins_dir,
            languages,
            coding,
        } => {
            let demo = if languages {
                clawhost::demo::Demo::Languages
            } else if coding {
                clawhost::demo::Demo::Coding
            } else {
                clawhost::demo::Demo::Rust
            };
            clawhost::demo::run(plugins_dir, demo).await
        }
        Command::BuildPlugins { out } => {
            let dir = clawhost::build::build_plugins(out.as_deref())?;
            clawhost::say!("{}", dir.display());
            Ok(())
        }
        Command::Run {
            agent,
            model,
            session,
            timeout,
            json,
            plugins,
            images,
            message,
        } => {
            let timeout = match timeout {
                Some(t) if !(t.is_finite() && t > 0.0) => {
                    anyhow::bail!("--timeout must be a positive number of seconds, not {t}")
                }
                t => t.map(std::time::Duration::from_secs_f64),
            };
            let message = if message == "-" {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                    .map_err(|e| anyhow::anyhow!("reading the message from standard input: {e}"))?;
                text.trim_end_matches('\n').to_string()
            } else {
                message
            };
            let args = clawhost::run::RunArgs {
                agent,
                model,
                message,
                session,
                timeout,
                json,
                dev_plugins: plugins,
                images: images
                    .iter()
                    .map(|i| clawhost::images::load(i))
                    .collect::<anyhow::Result<_>>()?,
            };
            clawhost::run::run(&config_path()?, args).await
        }
        Command::Gateway { bind } => clawhost::gateway::run(&config_path()?, bind.as_deref()).await,
        Command::Models { json } => clawhost::run::models(&config_path()?, json),
        Command::Mcp { action } => clawhost::mcp::run(&config_path()?, action).await,
        Command::Doctor { json } => clawhost::doctor::run(&config_path()?, json).await,
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "clawhost",
                &mut std::io::stdout(),
            );
            Ok(())
        }
        Command::Chat {
            agent,
            session,
            plugins,
        } => clawhost::sessions::chat(&config_path()?, &agent, session, &plugins).await,
        Command::Sessions { agent, action } => {
            clawhost::sessions::manage(&config_path()?, &agent, action).await
        }
        Command::Plugin {
            action: PluginAction::Build { dir, force },
        } => clawhost::plugin_build::build(&dir, force).map(|_| ()),
        Command::Plugin {
            action:
                PluginAction::Publish {
                    dir,
                    target,
                    registry_timeout,
                },
        } => {
            let timeout = std::time::Duration::from_secs(registry_timeout);
            clawhost::plugin_oci::publish(&dir, &target, timeout).await
        }
        Command::Plugin {
            action: PluginAction::New { dir, lang, id },
        } => {
            for path in clawhost::scaffold::new_plugin(
                &dir,
                lang,
                id.as_deref(),
                &clawhost::sdk::sdk_root()?,
            )? {
                clawhost::say!("wrote {}", path.display());
            }
            Ok(())
        }
        Command::Plugins { action } => {
            let path = match action {
                Some(clawhost::plugins::Action::Install { .. }) => {
                    clawhost_config::locate_or_new(cli.config.as_deref())?
                }
                // A running gateway's plugins need no config here.
                Some(clawhost::plugins::Action::List {
                    gateway: Some(_), ..
                }) => PathBuf::new(),
                _ => config_path()?,
            };
            clawhost::plugins::run(&path, action).await
        }
        Command::Config { action } => {
            let path = match action {
                clawhost::config_cmd::Action::Set { .. } => {
                    clawhost_config::locate_or_new(cli.config.as_deref())?
                }
                clawhost::config_cmd::Action::Schema => PathBuf::new(),
                _ => config_path()?,
            };
            clawhost::config_cmd::run(&path, action)
        }
    }
}

#[cfg(test)]
#[path = "docs_tests.rs"]
mod docs_tests;
