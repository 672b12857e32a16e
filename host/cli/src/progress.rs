//! Progress of a long child process (a guest build): a spinner with the
//! child's latest output line on a terminal, one line before and after
//! otherwise. The child's whole output is kept for the error when it fails.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

/// Run `cmd` showing `what` as it goes; on failure the error holds the
/// output. Returns the child's stdout.
pub fn run(what: &str, cmd: &mut Command) -> anyhow::Result<String> {
    let started = Instant::now();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    let spinner = if terminal {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                .expect("a valid template"),
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
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut out);
        out
    });
    let mut log = String::new();
    for line in BufReader::new(child.stderr.take().expect("piped"))
        .lines()
        .map_while(Result::ok)
    {
        if let Some(bar) = &spinner {
            bar.set_message(
                crate::clawhost_agent_core::text::terminal_safe(line.trim()).to_string(),
            );
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
