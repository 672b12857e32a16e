//! Progress of a long child process (a guest build): a spinner with the
//! child's latest output line on a terminal, one line before and after
//! otherwise. The child's whole output is kept for the error when it fails.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

/// How often a plain (off-terminal) progress line is printed at most.
const PLAIN_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Run `cmd` showing `what` as it goes; on failure the error holds the
/// output. Returns the child's stdout.
pub fn run(what: &str, cmd: &mut Command) -> anyhow::Result<String> {
    let started = Instant::now();
    let spinner = if crate::styled_stderr() {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.set_prefix(what.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Some(bar)
    } else {
        esay!("{what}…");
        None
    };
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {:?}", cmd.get_program()))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        bail!("{what}: the command's output pipes were not opened");
    };
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut out);
        out
    });
    let mut log = String::new();
    let mut last_said = started;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        match &spinner {
            Some(bar) => bar.set_message(
                crate::clawhost_agent_core::text::terminal_safe(line.trim()).to_string(),
            ),
            // Off a terminal, a line at most every PLAIN_EVERY: a long
            // build still shows it is alive, and where it is.
            None if last_said.elapsed() >= PLAIN_EVERY && !line.trim().is_empty() => {
                last_said = Instant::now();
                esay!(
                    "{what}: {:.0} s: {}",
                    started.elapsed().as_secs_f64(),
                    line.trim()
                );
            }
            None => {}
        }
        log.push_str(&line);
        log.push('\n');
    }
    let status = child.wait()?;
    let stdout = reader.join().unwrap_or_default();
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
    if !status.success() {
        bail!("{what} failed ({status}):\n{log}{stdout}");
    }
    esay!("{what}: done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(stdout)
}

/// Draws the host's `clawhost::progress` events (component compiles, cache
/// eviction): on a terminal one spinner per compile while it runs, then its
/// outcome as a line; elsewhere each event as a plain line.
pub struct ProgressLayer {
    bars: Option<indicatif::MultiProgress>,
    running: std::sync::Mutex<std::collections::HashMap<String, indicatif::ProgressBar>>,
}

impl ProgressLayer {
    /// Spinners when stderr is a terminal (and `NO_COLOR` is unset).
    pub fn new() -> Self {
        Self {
            bars: crate::styled_stderr().then(indicatif::MultiProgress::new),
            running: Default::default(),
        }
    }
}

impl Default for ProgressLayer {
    fn default() -> Self {
        Self::new()
    }
}

/// The fields of a progress event.
#[derive(Default)]
struct Fields {
    message: String,
    phase: Option<String>,
    plugin: Option<String>,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "phase" => self.phase = Some(value.into()),
            "plugin" => self.plugin = Some(value.into()),
            "message" => self.message = value.into(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ProgressLayer {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if event.metadata().target() != "clawhost::progress" {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let line = crate::clawhost_agent_core::text::terminal_safe(&fields.message).to_string();
        let Some(bars) = &self.bars else {
            eprintln!("{line}");
            return;
        };
        let mut running = clawhost_agent_core::lock(&self.running);
        match (fields.phase.as_deref(), fields.plugin) {
            (Some("compiling"), Some(plugin)) => {
                let bar = bars.add(indicatif::ProgressBar::new_spinner());
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
                bar.set_message(line);
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
                running.insert(plugin, bar);
            }
            (Some("compiled"), Some(plugin)) => {
                if let Some(bar) = running.remove(&plugin) {
                    bar.finish_and_clear();
                    bars.remove(&bar);
                }
                let _ = bars.println(line);
            }
            _ => {
                let _ = bars.println(line);
            }
        }
    }
}
