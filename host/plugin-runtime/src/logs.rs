//! Plugin output: the `log` import and captured stdout/stderr, forwarded to
//! `tracing` (target `clawhost::plugin`) and kept in a bounded per-plugin buffer.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Lines kept per plugin.
const KEEP_LINES: usize = 1000;
/// Longest line kept; longer output is split.
const MAX_LINE: usize = 8 * 1024;

/// Where a plugin log line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSource {
    /// The `log` import, at a level.
    Log(LogLevel),
    /// Captured stdout.
    Stdout,
    /// Captured stderr.
    Stderr,
}

/// Severity of a `log` import call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Trace.
    Trace,
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Warn.
    Warn,
    /// Error.
    Error,
}

/// One line of plugin output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Origin.
    pub source: LogSource,
    /// Text (no trailing newline).
    pub message: String,
}

/// The log buffer of one plugin.
#[derive(Debug)]
pub struct PluginLogs {
    plugin: Arc<str>,
    lines: Mutex<VecDeque<LogLine>>,
}

impl PluginLogs {
    /// An empty buffer for a plugin.
    pub fn new(plugin: &str) -> Arc<Self> {
        Arc::new(Self {
            plugin: plugin.into(),
            lines: Mutex::default(),
        })
    }

    /// Record a line and forward it to `tracing`.
    pub fn push(&self, source: LogSource, message: String) {
        let plugin = &*self.plugin;
        match source {
            LogSource::Log(LogLevel::Trace) => {
                tracing::trace!(target: "clawhost::plugin", plugin, "{message}")
            }
            LogSource::Log(LogLevel::Debug) => {
                tracing::debug!(target: "clawhost::plugin", plugin, "{message}")
            }
            LogSource::Log(LogLevel::Info) => {
                tracing::info!(target: "clawhost::plugin", plugin, "{message}")
            }
            LogSource::Log(LogLevel::Warn) => {
                tracing::warn!(target: "clawhost::plugin", plugin, "{message}")
            }
            LogSource::Log(LogLevel::Error) => {
                tracing::error!(target: "clawhost::plugin", plugin, "{message}")
            }
            LogSource::Stdout => {
                tracing::info!(target: "clawhost::plugin", plugin, stream = "stdout", "{message}")
            }
            LogSource::Stderr => {
                tracing::warn!(target: "clawhost::plugin", plugin, stream = "stderr", "{message}")
            }
        }
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == KEEP_LINES {
            lines.pop_front();
        }
        lines.push_back(LogLine { source, message });
    }

    /// The lines kept so far, oldest first.
    pub fn lines(&self) -> Vec<LogLine> {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// A guest stdout or stderr that turns written bytes into log lines.
#[derive(Clone)]
pub struct CapturedOutput {
    logs: Arc<PluginLogs>,
    source: LogSource,
}

impl CapturedOutput {
    /// Capture into `logs`, tagged with `source` (stdout or stderr).
    pub fn new(logs: Arc<PluginLogs>, source: LogSource) -> Self {
        Self { logs, source }
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(LineWriter {
            out: self.clone(),
            pending: Vec::new(),
        })
    }
}

struct LineWriter {
    out: CapturedOutput,
    pending: Vec<u8>,
}

impl LineWriter {
    fn emit(&mut self, upto: usize) {
        let line: Vec<u8> = self.pending.drain(..upto).collect();
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        self.out.logs.push(self.out.source, text.to_string());
    }
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.pending.extend_from_slice(buf);
        while let Some(pos) = self.pending.iter().position(|b| *b == b'\n') {
            self.emit(pos + 1);
        }
        while self.pending.len() >= MAX_LINE {
            self.emit(MAX_LINE);
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if !self.pending.is_empty() {
            let n = self.pending.len();
            self.emit(n);
        }
        Poll::Ready(Ok(()))
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let n = self.pending.len();
            self.emit(n);
        }
    }
}
