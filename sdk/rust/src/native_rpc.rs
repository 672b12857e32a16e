//! JSON-RPC over a granted process, one message per line, as native agent
//! runtimes speak it: ACP agents (JSON-RPC 2.0) and the Codex app-server
//! (the same without the `jsonrpc` member). Requests from the runtime (tool
//! calls, approvals) can arrive while the client waits for a response; they
//! come back to the caller in order.

use serde_json::{json, Value};

use crate::native::{Process, ProcessError};

/// One message from the server.
pub enum Incoming {
    /// A response to one of our requests.
    Response {
        id: i64,
        result: Result<Value, String>,
    },
    /// A request the server makes of us.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification.
    Notification { method: String, params: Value },
}

/// Why talking to the server failed.
pub enum WireError {
    /// The channel failed (the process exited, flooded, went silent…).
    Process(ProcessError),
    /// A line that is not a JSON-RPC message.
    Malformed(String),
}

impl WireError {
    /// Whether the host says the turn was aborted (`exited("turn aborted:
    /// …")`, said once by `recv`): the process still runs for a few
    /// seconds, so the harness can stop the runtime's own turn
    /// (`turn/interrupt`, `session/cancel`) and read until it has stopped.
    pub fn is_turn_aborted(&self) -> bool {
        matches!(self, WireError::Process(ProcessError::Exited(m)) if m.starts_with("turn aborted"))
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Process(ProcessError::NotGranted(m)) => write!(f, "not granted: {m}"),
            WireError::Process(ProcessError::Spawn(m)) => write!(f, "could not start: {m}"),
            WireError::Process(ProcessError::BadOutput(m)) => write!(f, "unusable output: {m}"),
            WireError::Process(ProcessError::Exited(m)) => write!(f, "exited: {m}"),
            WireError::Process(ProcessError::Timeout) => write!(f, "went silent (timed out)"),
            WireError::Process(ProcessError::Io(m)) => write!(f, "{m}"),
            WireError::Malformed(line) => write!(f, "wrote a line that is not JSON-RPC: {line}"),
        }
    }
}

/// A JSON-RPC client over a granted process.
pub struct Rpc {
    process: Process,
    next_id: i64,
    /// Whether messages carry `"jsonrpc": "2.0"`.
    versioned: bool,
}

impl Rpc {
    /// JSON-RPC 2.0 (ACP agents): every message says `"jsonrpc": "2.0"`.
    pub fn v2(process: Process) -> Self {
        Self {
            process,
            next_id: 1,
            versioned: true,
        }
    }

    /// The Codex app-server's dialect: JSON-RPC without the `jsonrpc` member.
    pub fn unversioned(process: Process) -> Self {
        Self {
            process,
            next_id: 1,
            versioned: false,
        }
    }

    fn send(&self, mut message: Value) -> Result<(), WireError> {
        if self.versioned {
            message["jsonrpc"] = json!("2.0");
        }
        self.process
            .send(&message.to_string())
            .map_err(WireError::Process)
    }

    /// Send a request; its id.
    pub fn request(&mut self, method: &str, params: Value) -> Result<i64, WireError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    /// Send a notification (`params` omitted when `null`).
    pub fn notify(&self, method: &str, params: Value) -> Result<(), WireError> {
        let mut message = json!({"method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(message)
    }

    /// Answer a server request.
    pub fn respond(&self, id: Value, result: Value) -> Result<(), WireError> {
        self.send(json!({"id": id, "result": result}))
    }

    /// Refuse a server request.
    pub fn refuse(&self, id: Value, message: &str) -> Result<(), WireError> {
        self.fail(id, -32601, message)
    }

    /// Answer request `id` with a JSON-RPC error of `code`.
    pub fn fail(&self, id: Value, code: i64, message: &str) -> Result<(), WireError> {
        self.send(json!({"id": id, "error": {"code": code, "message": message}}))
    }

    /// The next message, waiting at most `timeout_ms`.
    pub fn next(&self, timeout_ms: u32) -> Result<Incoming, WireError> {
        let line = self.process.recv(timeout_ms).map_err(WireError::Process)?;
        parse(&line).ok_or_else(|| {
            let mut shown: String = line.chars().take(200).collect();
            if shown.len() < line.len() {
                shown.push('…');
            }
            WireError::Malformed(shown)
        })
    }
}

fn parse(line: &str) -> Option<Incoming> {
    let mut message: Value = serde_json::from_str(line).ok()?;
    let object = message.as_object_mut()?;
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(String::from);
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("id"), method) {
        (Some(id), Some(method)) => Some(Incoming::Request { id, method, params }),
        (None, Some(method)) => Some(Incoming::Notification { method, params }),
        (Some(id), None) => {
            let id = id.as_i64()?;
            let result = match (object.remove("result"), object.remove("error")) {
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(error["message"]
                    .as_str()
                    .map_or_else(|| error.to_string(), String::from)),
                _ => return None,
            };
            Some(Incoming::Response { id, result })
        }
        (None, None) => None,
    }
}
