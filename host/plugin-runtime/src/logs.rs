//! Plugin output: the `log` import and captured stdout/stderr, forwarded to
//! `tracing` (target `clawhost::plugin`) and kept in a bounded per-plugin buffer.
//!
//! Everything a plugin writes is bounded on the host's side: a line is cut at
//! 8 KiB, each call may emit a byte budget (the rest is dropped and counted),
//! the buffer keeps at most 1,000 lines and 1 MiB, and control characters
//! are escaped before the text is kept, so no line can drive a terminal.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Lines kept per plugin.
const KEEP_LINES: usize = 1000;
/// Longest line kept; a longer `log` message is cut, longer output is split.
const MAX_LINE: usize = 8 * 1024;
/// Bytes kept per plugin.
const KEEP_BYTES: usize = 1 << 20;

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

#[derive(Debug, Default)]
struct Buffer {
    lines: VecDeque<LogLine>,
    kept_bytes: usize,
    /// Bytes emitted in the current call.
    call_bytes: usize,
    /// Lines and bytes dropped in the current call.
    dropped: (u64, u64),
}

/// The log buffer of one plugin.
#[derive(Debug)]
pub struct PluginLogs {
    plugin: Arc<str>,
    budget_per_call: usize,
    buffer: Mutex<Buffer>,
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl PluginLogs {
    /// An empty buffer for a plugin that may emit `budget_per_call` bytes per call.
    pub fn new(plugin: &str, budget_per_call: usize) -> Arc<Self> {
        Arc::new(Self {
            plugin: plugin.into(),
            budget_per_call,
            buffer: Mutex::default(),
        })
    }

    fn buffer(&self) -> std::sync::MutexGuard<'_, Buffer> {
        clawhost_agent_core::lock(&self.buffer)
    }

    /// Start a call: the per-call budget is full again. The call ends when
    /// the guard drops (served, failed or cancelled alike).
    pub fn call(&self) -> CallGuard<'_> {
        let mut b = self.buffer();
        b.call_bytes = 0;
        b.dropped = (0, 0);
        CallGuard(self)
    }

    /// End a call: if lines were dropped, one line says how many.
    fn end_call(&self) {
        let (lines, bytes) = std::mem::take(&mut self.buffer().dropped);
        if lines > 0 {
            self.keep(
                LogSource::Log(LogLevel::Warn),
                format!(
                    "[clawhost] dropped {lines} log lines ({bytes} bytes) of this call: over plugins.limits.maxLogKbPerCall ({} KiB)",
                    self.budget_per_call >> 10
                ),
            );
        }
    }

    /// Record a line (cut at 8 KiB, within the call's budget) and forward it
    /// to `tracing`.
    pub fn push(&self, source: LogSource, message: String) {
        {
            let mut b = self.buffer();
            let len = message.len().min(MAX_LINE);
            if b.call_bytes.saturating_add(len) > self.budget_per_call {
                b.dropped.0 += 1;
                b.dropped.1 += message.len() as u64;
                return;
            }
            b.call_bytes += len;
        }
        let text = if message.len() > MAX_LINE {
            format!(
                "{}… [cut: {} bytes]",
                cut(&message, MAX_LINE),
                message.len()
            )
        } else {
            message
        };
        self.keep(source, text);
    }

    fn keep(&self, source: LogSource, message: String) {
        let message = clawhost_agent_core::text::terminal_safe(&message).into_owned();
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
        let mut b = self.buffer();
        b.kept_bytes += message.len();
        b.lines.push_back(LogLine { source, message });
        while b.lines.len() > KEEP_LINES || b.kept_bytes > KEEP_BYTES {
            match b.lines.pop_front() {
                Some(old) => b.kept_bytes -= old.message.len(),
                None => break,
            }
        }
    }

    /// The lines kept so far, oldest first.
    pub fn lines(&self) -> Vec<LogLine> {
        self.buffer().lines.iter().cloned().collect()
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

/// One call's log budget in use; see [`PluginLogs::call`].
pub struct CallGuard<'a>(&'a PluginLogs);

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.0.end_call();
    }
}
