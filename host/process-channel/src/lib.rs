//! A line-oriented stdio channel to a process the **operator** configured
//! (the Codex app-server, an ACP agent): the groundwork of issue 37's
//! granted process channel, which a harness plugin will reach through the
//! plugin API, never naming a command itself.
//!
//! The process is started without a shell, with only the configured
//! environment, in its own process group. What it writes is read a line at a
//! time, each line bounded and the bytes of a turn bounded; its standard
//! error is drained into the log, bounded; the whole group is killed when the
//! channel is dropped or killed. A process that dies, floods or writes an
//! unusable line ends the read with a typed [`ChannelError`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// What to start, as the operator configured it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessSpec {
    /// The program (a path, or a name looked up on the host's `PATH`).
    pub command: String,
    /// Its arguments, passed as they are (no shell).
    pub args: Vec<String>,
    /// Its whole environment: nothing else of the host's is passed.
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: the host's).
    pub cwd: Option<PathBuf>,
}

/// Bounds on what the process may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest line, in bytes (without its line break).
    pub max_line_bytes: usize,
    /// Most bytes read between two [`ProcessChannel::new_turn`] calls.
    pub max_bytes_per_turn: u64,
    /// Most bytes of its standard error written to the log (the rest is
    /// read and dropped, so the process never blocks on it).
    pub max_stderr_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line_bytes: 1 << 20,
            max_bytes_per_turn: 64 << 20,
            max_stderr_bytes: 64 << 10,
        }
    }
}

/// Why the channel cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The process could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The configured command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line past [`Limits::max_line_bytes`].
    #[error("`{command}` wrote a line longer than {limit} bytes")]
    LineTooLong {
        /// The configured command.
        command: String,
        /// The bound.
        limit: usize,
    },
    /// More than [`Limits::max_bytes_per_turn`] in one turn.
    #[error("`{command}` wrote more than {limit} bytes in one turn")]
    Flood {
        /// The configured command.
        command: String,
        /// The bound.
        limit: u64,
    },
    /// A line that is not UTF-8.
    #[error("`{command}` wrote a line that is not UTF-8")]
    NotUtf8 {
        /// The configured command.
        command: String,
    },
    /// The process closed its output (it exited, or is exiting).
    #[error("`{command}` exited ({status})")]
    Exited {
        /// The configured command.
        command: String,
        /// How, as far as known (`exit status: 3`, `signal: 9`, `running`).
        status: String,
    },
    /// A line to send holds a line break (it would be two messages).
    #[error("a line sent to `{command}` holds a line break")]
    LineBreak {
        /// The configured command.
        command: String,
    },
    /// Reading from or writing to the process failed.
    #[error("`{command}`: {source}")]
    Io {
        /// The configured command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
}

/// A started process and the two ends of its standard input and output.
pub struct ProcessChannel {
    command: String,
    child: Child,
    pid: Option<u32>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    limits: Limits,
    read_this_turn: u64,
}

impl ProcessChannel {
    /// Start `spec` under `limits` (inside a Tokio runtime).
    pub fn spawn(spec: &ProcessSpec, limits: Limits) -> Result<Self, ChannelError> {
        let command = spec.command.clone();
        let mut cmd = Command::new(&spec.command);
        cmd.args(&spec.args)
            .env_clear()
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|source| ChannelError::Spawn {
            command: command.clone(),
            source,
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ChannelError::Spawn {
                command,
                source: std::io::Error::other("its standard streams were not opened"),
            });
        };
        tokio::spawn(log_stderr(
            command.clone(),
            BufReader::new(stderr),
            limits.max_stderr_bytes,
        ));
        Ok(Self {
            command,
            pid: child.id(),
            child,
            stdin,
            stdout: BufReader::new(stdout),
            limits,
            read_this_turn: 0,
        })
    }

    /// The process id (of the group's leader), until it is reaped.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Start counting a new turn's bytes.
    pub fn new_turn(&mut self) {
        self.read_this_turn = 0;
    }

    /// Send one line (a line break is added).
    pub async fn send(&mut self, line: &str) -> Result<(), ChannelError> {
        if line.contains('\n') {
            return Err(ChannelError::LineBreak {
                command: self.command.clone(),
            });
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let written = match self.stdin.write_all(&bytes).await {
            Ok(()) => self.stdin.flush().await,
            Err(e) => Err(e),
        };
        match written {
            Ok(()) => Ok(()),
            // Its input is closed: it exited (or is exiting), which says
            // more than the broken pipe does.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(self.exited().await),
            Err(source) => Err(ChannelError::Io {
                command: self.command.clone(),
                source,
            }),
        }
    }

    /// The next line the process wrote (without its line break). After an
    /// error the channel is done: drop it (which kills the process group).
    pub async fn recv(&mut self) -> Result<String, ChannelError> {
        let line = match read_line(&mut self.stdout, self.limits.max_line_bytes).await {
            Ok(Some(line)) => line,
            Ok(None) => return Err(self.exited().await),
            Err(Read::TooLong) => {
                return Err(ChannelError::LineTooLong {
                    command: self.command.clone(),
                    limit: self.limits.max_line_bytes,
                })
            }
            Err(Read::Io(source)) => {
                return Err(ChannelError::Io {
                    command: self.command.clone(),
                    source,
                })
            }
        };
        self.read_this_turn += line.len() as u64 + 1;
        if self.read_this_turn > self.limits.max_bytes_per_turn {
            return Err(ChannelError::Flood {
                command: self.command.clone(),
                limit: self.limits.max_bytes_per_turn,
            });
        }
        String::from_utf8(line).map_err(|_| ChannelError::NotUtf8 {
            command: self.command.clone(),
        })
    }

    /// Kill the process group and reap the process.
    pub async fn kill(mut self) {
        kill_group(self.pid.take());
        let _ = self.child.wait().await;
    }

    /// The error for a closed output: how the process ended, if it did
    /// within a moment.
    async fn exited(&mut self) -> ChannelError {
        let status = match tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await {
            Err(_) => "its output closed; still running".to_string(),
            Ok(waited) => {
                // Reaped: what it started goes now, while its group id
                // cannot yet name another process's group.
                kill_group(self.pid.take());
                waited.map_or_else(|e| e.to_string(), |s| s.to_string())
            }
        };
        ChannelError::Exited {
            command: self.command.clone(),
            status,
        }
    }
}

impl Drop for ProcessChannel {
    fn drop(&mut self) {
        // The whole group: a process the channel started may have started
        // others. Once the leader is reaped (`pid` taken) its group was
        // killed then; its number may since name another group.
        kill_group(self.pid.take());
    }
}

fn kill_group(pid: Option<u32>) {
    let pid = pid.and_then(|p| i32::try_from(p).ok());
    if let Some(pid) = pid.and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

enum Read {
    TooLong,
    Io(std::io::Error),
}

/// One line of at most `max` bytes; `None` at the end of the stream (a last
/// line without a line break is a line).
async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> Result<Option<Vec<u8>>, Read> {
    let mut line = Vec::new();
    loop {
        let buf = reader.fill_buf().await.map_err(Read::Io)?;
        if buf.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        if line.len() + chunk.len() > max {
            return Err(Read::TooLong);
        }
        line.extend_from_slice(chunk);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(line));
        }
    }
}

/// Write the process's standard error to the log, `max` bytes at most, and
/// drain the rest.
async fn log_stderr(command: String, mut stderr: impl AsyncBufRead + Unpin, max: usize) {
    let mut logged = 0usize;
    loop {
        match read_line(&mut stderr, 4096).await {
            Ok(Some(line)) if logged < max => {
                logged += line.len() + 1;
                let text = String::from_utf8_lossy(&line);
                tracing::warn!(target: "clawhost::process", %command, "stderr: {text}");
                if logged >= max {
                    tracing::warn!(target: "clawhost::process", %command, "stderr past {max} bytes is not logged");
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => return,
            // A long line: drop the rest of it.
            Err(Read::TooLong) => {
                let mut sink = [0u8; 4096];
                if !matches!(stderr.read(&mut sink).await, Ok(n) if n > 0) {
                    return;
                }
            }
            Err(Read::Io(_)) => return,
        }
    }
}

#[cfg(test)]
mod tests;
