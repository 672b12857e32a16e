//! `exec` (run a shell command in the workspace) and `process` (poll or kill
//! the commands `exec` started in the background).
//!
//! A command runs under `/bin/sh -c` in its own process group, with stdin
//! closed, a minimal environment (no secrets of the host's; plugins add
//! only what `grants.execEnv` allows, see `exec_env`), a time limit
//! after which the whole group is killed, and its output capped. It asks the
//! operator first unless the operator allowlisted it (`tools.exec.allow`).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clawhost_agent_core::{ApprovalRequest, Severity, TimeoutBehavior, ToolError};
use clawhost_config::ExecConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::exec_env::ExecEnv;
use crate::spec::{parse, Base, HostTool};
use crate::{Workspace, Workspaces};

/// Background processes one host keeps at once.
const MAX_BACKGROUND: usize = 8;
/// Environment variables a command inherits from the host.
const KEPT_ENV: [&str; 5] = ["PATH", "HOME", "LANG", "USER", "TZ"];
/// Characters that make a command shell syntax (never allowlisted).
const SHELL_SYNTAX: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '[', ']', '*', '?', '~', '!', '#', '\'',
    '"', '\\', '\n', '\r',
];

/// Whether `command` runs without asking: plain words (no shell syntax)
/// that begin with the words of an allowlist entry, or an entry `*`.
pub(crate) fn allowlisted(allow: &[String], command: &str) -> bool {
    if allow.iter().any(|a| a.trim() == "*") {
        return true;
    }
    if command.contains(SHELL_SYNTAX) {
        return false;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    allow.iter().any(|entry| {
        let want: Vec<&str> = entry.split_whitespace().collect();
        !want.is_empty() && words.starts_with(&want)
    })
}

/// Output of one stream, capped: the first `cap` bytes and how many more came.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Captured {
    fn push(&mut self, chunk: &[u8], cap: usize) {
        let room = cap.saturating_sub(self.bytes.len());
        let kept = chunk.len().min(room);
        self.bytes.extend_from_slice(&chunk[..kept]);
        self.dropped += (chunk.len() - kept) as u64;
    }

    /// Take what was captured so far (for `process poll`).
    fn take(&mut self) -> (String, u64) {
        let text = String::from_utf8_lossy(&self.bytes).into_owned();
        self.bytes.clear();
        (text, std::mem::take(&mut self.dropped))
    }
}

/// Read `stream` to its end into `out` (capped at `cap`).
async fn drain(mut stream: impl AsyncRead + Unpin, out: Arc<Mutex<Captured>>, cap: usize) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        clawhost_agent_core::lock(&out).push(&buf[..n], cap);
    }
}

/// Kill the process group led by `pid`.
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A command just started: who started it, and where its output goes.
struct Started {
    agent_id: String,
    command: String,
    pid: Option<u32>,
    stdout: Arc<Mutex<Captured>>,
    stderr: Arc<Mutex<Captured>>,
}

/// A command running in the background.
struct Background {
    started: Started,
    /// The exit code once it ended (`None` inside: killed by a signal).
    status: Arc<Mutex<Option<Option<i32>>>>,
}

/// The background commands of this host, by id.
#[derive(Default)]
pub(crate) struct Processes {
    next: Mutex<u64>,
    running: Mutex<HashMap<String, Background>>,
}

impl Drop for Processes {
    fn drop(&mut self) {
        for p in clawhost_agent_core::lock(&self.running).values() {
            kill_group(p.started.pid);
        }
    }
}

/// `exec`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecParams {
    /// The command, run by `sh -c`
    #[schemars(length(min = 1))]
    command: String,
    /// Working directory, relative to the workspace
    #[serde(default)]
    cwd: String,
    /// Time limit in milliseconds (capped by the operator's)
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
    /// Start it and return a process id at once
    #[serde(default)]
    background: bool,
}

/// `process`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProcessParams {
    /// What to do
    action: ProcessAction,
    /// The processId exec returned (poll, kill)
    #[serde(default)]
    id: String,
}

/// What `process` does.
#[derive(Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum ProcessAction {
    /// The agent's background commands.
    List,
    /// New output and the exit code of one.
    Poll,
    /// Stop one.
    Kill,
}

/// `exec`: run a command in the workspace.
pub(crate) struct Exec {
    base: Base,
    config: ExecConfig,
    processes: Arc<Processes>,
    env: ExecEnv,
}

impl Exec {
    pub(crate) fn new(
        workspaces: Arc<Workspaces>,
        config: ExecConfig,
        processes: Arc<Processes>,
        env: ExecEnv,
    ) -> Self {
        Self {
            base: Base::new::<ExecParams>(
                workspaces,
                "exec",
                "Run a shell command (sh -c) in the workspace and return its exit code, stdout and stderr (capped). The operator may be asked first. Set background to start a long-running command and follow it with the process tool.",
            ),
            config,
            processes,
            env,
        }
    }

    fn cap(&self) -> usize {
        usize::try_from(self.config.max_output_kb << 10).unwrap_or(usize::MAX)
    }

    fn spawn(
        &self,
        ws: &Workspace,
        command: &str,
        cwd: &str,
        env: Vec<(String, String)>,
    ) -> Result<tokio::process::Child, ToolError> {
        let rel = ws.relative(cwd)?;
        let dir = ws.real_dir(&rel)?;
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(dir)
            .env_clear()
            // Plugins' variables first: the host's own names are never
            // theirs (exec_env refuses them), and would override them.
            .envs(env)
            .envs(
                KEPT_ENV
                    .iter()
                    .filter_map(|k| Some((k, std::env::var_os(k)?))),
            )
            .env("TERM", "dumb")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd.spawn()
            .map_err(|e| ToolError::failed(format!("cannot start the command: {e}")))
    }

    async fn run(
        &self,
        p: ExecParams,
        ws: Arc<Workspace>,
        agent_id: &str,
        env: Vec<(String, String)>,
    ) -> Result<Value, ToolError> {
        let ExecParams {
            command,
            cwd,
            timeout_ms,
            background,
        } = p;
        let limit = timeout_ms
            .unwrap_or(self.config.timeout_ms)
            .min(self.config.timeout_ms);
        let mut child = self.spawn(&ws, &command, &cwd, env)?;
        let pid = child.id();
        let (Some(out_pipe), Some(err_pipe)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(ToolError::failed(
                "the command's output pipes were not opened",
            ));
        };
        let (stdout, stderr) = (Arc::default(), Arc::default());
        let readers = [
            tokio::spawn(drain(out_pipe, Arc::clone(&stdout), self.cap())),
            tokio::spawn(drain(err_pipe, Arc::clone(&stderr), self.cap())),
        ];
        if background {
            let started = Started {
                agent_id: agent_id.into(),
                command,
                pid,
                stdout,
                stderr,
            };
            return self.keep_in_background(child, started, limit);
        }
        // A turn aborted while the command runs drops this future: the
        // whole group goes with it, not only the shell.
        let group = GroupGuard(pid);
        let (code, timed_out) =
            match tokio::time::timeout(Duration::from_millis(limit), child.wait()).await {
                Ok(status) => (status.map_err(|e| e.to_string())?.code(), false),
                Err(_) => {
                    kill_group(pid);
                    let _ = child.wait().await;
                    (None, true)
                }
            };
        std::mem::forget(group);
        // A process that left the group may still hold the pipes open.
        for reader in readers {
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
        let (out, out_dropped) = clawhost_agent_core::lock(&stdout).take();
        let (err, err_dropped) = clawhost_agent_core::lock(&stderr).take();
        Ok(json!({
            "exitCode": code,
            "timedOut": timed_out,
            "stdout": out,
            "stderr": err,
            "truncatedBytes": out_dropped + err_dropped,
        }))
    }

    fn keep_in_background(
        &self,
        mut child: tokio::process::Child,
        started: Started,
        limit: u64,
    ) -> Result<Value, ToolError> {
        let pid = started.pid;
        let mut running = clawhost_agent_core::lock(&self.processes.running);
        let live = running
            .values()
            .filter(|p| clawhost_agent_core::lock(&p.status).is_none())
            .count();
        if live >= MAX_BACKGROUND {
            kill_group(pid);
            return Err(format!(
                "{MAX_BACKGROUND} background commands are running already; kill one with the process tool"
            ).into());
        }
        let id = {
            let mut next = clawhost_agent_core::lock(&self.processes.next);
            *next += 1;
            format!("p{}", *next)
        };
        let status: Arc<Mutex<Option<Option<i32>>>> = Arc::default();
        let done = Arc::clone(&status);
        tokio::spawn(async move {
            let code = match tokio::time::timeout(Duration::from_millis(limit), child.wait()).await
            {
                Ok(status) => status.ok().and_then(|s| s.code()),
                Err(_) => {
                    kill_group(pid);
                    let _ = child.wait().await;
                    None
                }
            };
            *clawhost_agent_core::lock(&done) = Some(code);
        });
        running.insert(id.clone(), Background { started, status });
        Ok(json!({"processId": id, "running": true}))
    }
}

/// Kills a foreground command's process group when dropped before it ended.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

#[async_trait::async_trait]
impl HostTool for Exec {
    fn spec(&self) -> &clawhost_agent_core::ToolSpec {
        &self.base.spec
    }
    async fn invoke(
        &self,
        call_id: &str,
        params: Value,
        ctx: &clawhost_agent_core::RunContext,
    ) -> Result<Value, ToolError> {
        let p: ExecParams = parse(params)?;
        let ws = self.base.workspace(ctx)?;
        let env = self.env.resolve(ctx, call_id, &p.command, &p.cwd).await?;
        self.run(p, ws, &ctx.agent_id, env).await
    }
    fn approval(&self, params: &Value) -> Option<ApprovalRequest> {
        // Checked against the schema before this is asked; parameters that
        // do not parse are asked about as they are, never let through.
        let p = ExecParams::deserialize(params).ok();
        let command = p.as_ref().map_or("", |p| p.command.as_str());
        if p.is_some() && allowlisted(&self.config.allow, command) {
            return None;
        }
        Some(ApprovalRequest {
            title: match &p {
                Some(_) => format!("run `{}`", clawhost_agent_core::text::clip(command, 200)),
                None => format!(
                    "run a command given as {}",
                    clawhost_agent_core::text::clip(&params.to_string(), 200)
                ),
            },
            description: format!(
                "exec in the workspace{}",
                p.as_ref()
                    .filter(|p| !p.cwd.is_empty())
                    .map(|p| format!(" (cwd {})", p.cwd))
                    .unwrap_or_default()
            ),
            severity: Severity::Warning,
            timeout_ms: None,
            timeout_behavior: TimeoutBehavior::Deny,
        })
    }
}

/// `process`: list, poll or kill background commands of the run's agent.
pub(crate) struct Process {
    base: Base,
    processes: Arc<Processes>,
}

impl Process {
    pub(crate) fn new(workspaces: Arc<Workspaces>, processes: Arc<Processes>) -> Self {
        Self {
            base: Base::new::<ProcessParams>(
                workspaces,
                "process",
                "Follow background commands started by exec: list them, poll one for new output and its exit code, or kill it.",
            ),
            processes,
        }
    }

    fn act(&self, agent_id: &str, p: ProcessParams) -> Result<Value, ToolError> {
        let mut running = clawhost_agent_core::lock(&self.processes.running);
        if p.action == ProcessAction::List {
            let list: Vec<Value> = running
                .iter()
                .filter(|(_, p)| p.started.agent_id == agent_id)
                .map(|(id, p)| {
                    json!({"id": id, "command": p.started.command, "running": clawhost_agent_core::lock(&p.status).is_none()})
                })
                .collect();
            return Ok(json!({"processes": list}));
        }
        let (action, id) = (p.action, p.id.as_str());
        let Some(p) = running.get(id).filter(|p| p.started.agent_id == agent_id) else {
            return Err(ToolError::invalid(format!(
                "no background process `{}`",
                clawhost_agent_core::text::clip(id, 64)
            )));
        };
        if action == ProcessAction::Kill {
            kill_group(p.started.pid);
            running.remove(id);
            return Ok(json!({"id": id, "killed": true}));
        }
        let status = *clawhost_agent_core::lock(&p.status);
        let (out, out_dropped) = clawhost_agent_core::lock(&p.started.stdout).take();
        let (err, err_dropped) = clawhost_agent_core::lock(&p.started.stderr).take();
        let result = json!({
            "id": id,
            "running": status.is_none(),
            "exitCode": status.flatten(),
            "stdout": out,
            "stderr": err,
            "truncatedBytes": out_dropped + err_dropped,
        });
        if status.is_some() {
            running.remove(id); // ended and read: forgotten
        }
        Ok(result)
    }
}

#[async_trait::async_trait]
impl HostTool for Process {
    fn spec(&self) -> &clawhost_agent_core::ToolSpec {
        &self.base.spec
    }
    async fn invoke(
        &self,
        _call_id: &str,
        params: Value,
        ctx: &clawhost_agent_core::RunContext,
    ) -> Result<Value, ToolError> {
        self.act(&ctx.agent_id, parse(params)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_commands_that_begin_with_an_entry_are_allowlisted() {
        let allow = vec!["cargo test".to_string(), "ls".to_string()];
        assert!(allowlisted(&allow, "cargo test -p x"));
        assert!(allowlisted(&allow, "ls"));
        assert!(!allowlisted(&allow, "cargo build"));
        assert!(!allowlisted(&allow, "cargo test; rm -rf /"));
        assert!(!allowlisted(&allow, "ls $(cat /etc/passwd)"));
        assert!(!allowlisted(&allow, "cargo test > out"));
        assert!(!allowlisted(&allow, "cargo testing"));
        assert!(!allowlisted(&[], "ls"));
        assert!(allowlisted(&["*".into()], "anything | at all"));
    }
}
