//! Starting a stdio MCP server: the configured program, no shell, only the
//! configured environment (and `PATH`), in its own process group; its
//! stderr goes to the log a bounded line at a time.

use std::path::Path;
use std::process::Stdio;

use clawhost_config::McpServerConfig;
use rmcp::service::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::AsyncBufReadExt;
use tokio::process::{ChildStdin, ChildStdout};

/// The transport to a started server and its process group id.
pub(crate) type Started = (AsyncRwTransport<RoleClient, ChildStdout, ChildStdin>, u32);

/// Start `config`'s program; lines longer than `max_line` are dropped.
pub(crate) fn spawn(
    name: &str,
    config: &McpServerConfig,
    base_dir: &Path,
    max_line: usize,
    stderr_line: usize,
) -> Result<Started, String> {
    let Some(program) = config.program(base_dir) else {
        return Err("no `command` to start".into());
    };
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&config.args)
        .env_clear()
        .envs(&config.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if !config.env.contains_key("PATH") {
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
    }
    if let Some(cwd) = &config.cwd {
        command.current_dir(base_dir.join(cwd));
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", program.display()))?;
    let pid = child.id().ok_or("the process exited at once")?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the process's stdio could not be taken".into());
    };
    let server = name.to_string();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            let text = String::from_utf8_lossy(&line[..line.len().min(stderr_line)]).into_owned();
            tracing::info!(server = %server, "MCP server stderr: {text}");
        }
        match child.wait().await {
            Ok(status) => tracing::info!(server = %server, %status, "MCP server exited"),
            Err(e) => {
                tracing::warn!(server = %server, error = %e, "MCP server could not be waited for")
            }
        }
    });
    let transport = AsyncRwTransport::new(stdout, stdin).with_max_line_length(max_line);
    Ok((transport, pid))
}
