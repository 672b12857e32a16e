//! `codex`: the Codex app-server as a clawhost agent runtime, bridged from a
//! sandboxed plugin. The operator grants the app-server process
//! (`grants.processes["app-server"]`); this plugin speaks its JSON-RPC
//! protocol over the process's stdio for one turn at a time:
//!
//! - `initialize`, then `thread/resume` of the thread stored on the session
//!   or `thread/start` with the turn's tools as Codex **dynamic tools**;
//! - `turn/start` with the user's text; agent message deltas stream to the
//!   user, each finished message is recorded in the host's mirror;
//! - `item/tool/call` (a host tool) runs through the host's one dispatch
//!   path (`turn.call-tool`: policy, schema, hooks, approvals);
//! - Codex's own command and file-change approval requests are asked of the
//!   host as `exec` / `apply_patch` (`native::gate_tool`), so policy plugins
//!   written for the built-in tools apply unchanged; the commands it ran are
//!   recorded with their output;
//! - Codex compacting its thread (a `contextCompaction` item started and
//!   completed) is told to the host (`native::compaction`): its
//!   `before_compaction` / `after_compaction` hooks fire, the mirror keeps
//!   every message;
//! - `turn/completed` ends the turn with the last agent message;
//! - an aborted turn (the host says so through the process's `recv`) sends
//!   `turn/interrupt` and waits for `turn/completed` (`interrupted`).
//!
//! Config (`plugins.entries.codex.config`): `approvalPolicy` (default
//! `untrusted`: Codex asks about every command that is not known safe),
//! `sandbox` (default `workspace-write`), `startTimeoutMs` (30 s),
//! `idleTimeoutMs` (10 min).

use clawhost_sdk::native::{self, CompactionPhase, Incoming, Rpc, Verdict, WireError};
use clawhost_sdk::{
    config, AttemptError, Claim, Harness, PreparedTurn, Route, Support, ToolRequest, ToolSpec,
    Turn, WireApi,
};
use serde_json::{json, Value};

/// The process this plugin opens (the manifest asks for it by this name).
const PROCESS: &str = "app-server";

#[derive(Default)]
struct Codex;

/// The operator's settings, with defaults.
struct Settings {
    approval_policy: String,
    sandbox: String,
    start_timeout_ms: u32,
    idle_timeout_ms: u32,
}

impl Settings {
    fn read() -> Self {
        let c = config();
        let text = |key: &str, default: &str| {
            c[key]
                .as_str()
                .map_or_else(|| default.to_string(), String::from)
        };
        let ms = |key: &str, default: u32| {
            c[key]
                .as_u64()
                .map_or(default, |v| u32::try_from(v).unwrap_or(u32::MAX))
        };
        Self {
            approval_policy: text("approvalPolicy", "untrusted"),
            sandbox: text("sandbox", "workspace-write"),
            start_timeout_ms: ms("startTimeoutMs", 30_000),
            idle_timeout_ms: ms("idleTimeoutMs", 600_000),
        }
    }
}

impl Harness for Codex {
    fn id(&self) -> String {
        "codex".into()
    }

    fn supports(&self, route: Route) -> Support {
        match route.api {
            WireApi::OpenaiResponses => Support::Supported(Claim {
                priority: 10,
                reason: "the Codex app-server speaks the OpenAI Responses API".into(),
            }),
            _ => {
                Support::Unsupported("the Codex app-server needs an OpenAI Responses route".into())
            }
        }
    }

    fn run_attempt(&self, turn: &Turn, prepared: PreparedTurn) -> Result<String, AttemptError> {
        let settings = Settings::read();
        let process = native::open_process(turn, PROCESS)
            .map_err(|e| failed("start", WireError::Process(e)))?;
        let mut bridge = Bridge {
            rpc: Rpc::unversioned(process),
            turn,
            settings,
            running: None,
        };
        bridge.run(&prepared)
    }
}

fn failed(doing: &str, error: WireError) -> AttemptError {
    AttemptError::Failed(format!("the Codex app-server ({doing}): {error}"))
}

/// One turn's conversation with the app-server.
struct Bridge<'a> {
    rpc: Rpc,
    turn: &'a Turn,
    settings: Settings,
    /// The Codex turn in progress (thread id, turn id), until
    /// `turn/interrupt` was sent for it.
    running: Option<(String, String)>,
}

impl Bridge<'_> {
    fn run(&mut self, prepared: &PreparedTurn) -> Result<String, AttemptError> {
        let start = self.settings.start_timeout_ms;
        let init = self
            .rpc
            .request(
                "initialize",
                json!({
                    "clientInfo": {"name": "clawhost", "title": "clawhost", "version": clawhost_sdk::API_VERSION},
                    "capabilities": {"experimentalApi": true},
                }),
            )
            .map_err(|e| failed("initialize", e))?;
        let info = self.wait(init, start, "initialize")?;
        self.rpc
            .notify("initialized", Value::Null)
            .map_err(|e| failed("initialized", e))?;
        let agent = agent_name(&info);
        let thread = self.open_thread(prepared, start)?;
        native::set_thread(self.turn, &thread, &agent);
        let started = self
            .rpc
            .request(
                "turn/start",
                json!({
                    "threadId": thread,
                    "input": [{"type": "text", "text": prepared.user_text}],
                }),
            )
            .map_err(|e| failed("turn/start", e))?;
        let started = self.wait(started, start, "turn/start")?;
        let turn_id = started["turn"]["id"].as_str().unwrap_or_default();
        self.running = Some((thread, turn_id.to_string()));
        self.follow_turn()
    }

    /// Resume the session's thread, or start one with the turn's tools.
    fn open_thread(
        &mut self,
        prepared: &PreparedTurn,
        timeout: u32,
    ) -> Result<String, AttemptError> {
        let model = prepared
            .model_ref
            .split_once('/')
            .map_or(prepared.model_ref.as_str(), |(_, m)| m);
        let mut params = json!({
            "model": model,
            "approvalPolicy": self.settings.approval_policy,
            "sandbox": self.settings.sandbox,
        });
        if let Some(system) = &prepared.system {
            params["developerInstructions"] = json!(system);
        }
        let (method, id) = match native::thread_id(self.turn) {
            Some(thread) => {
                params["threadId"] = json!(thread);
                ("thread/resume", thread)
            }
            None => {
                params["dynamicTools"] = prepared.tools.iter().map(dynamic_tool).collect();
                ("thread/start", String::new())
            }
        };
        let request = self
            .rpc
            .request(method, params)
            .map_err(|e| failed(method, e))?;
        let result = self.wait(request, timeout, method)?;
        match result["thread"]["id"].as_str() {
            Some(thread) => Ok(thread.to_string()),
            None if !id.is_empty() => Ok(id),
            None => Err(AttemptError::Failed(format!(
                "the Codex app-server answered {method} without a thread id"
            ))),
        }
    }

    /// Wait for the response to `id`, serving what comes meanwhile.
    fn wait(&mut self, id: i64, timeout: u32, what: &str) -> Result<Value, AttemptError> {
        loop {
            match self.rpc.next(timeout).map_err(|e| failed(what, e))? {
                Incoming::Response { id: got, result } if got == id => {
                    return result.map_err(|message| {
                        AttemptError::Failed(format!(
                            "the Codex app-server refused {what}: {message}"
                        ))
                    })
                }
                Incoming::Response { .. } | Incoming::Notification { .. } => {}
                Incoming::Request { id, method, params } => self.serve(id, &method, &params)?,
            }
        }
    }

    /// Follow the turn to `turn/completed`; the answer is its last message.
    fn follow_turn(&mut self) -> Result<String, AttemptError> {
        let mut answer = String::new();
        loop {
            let message = match self.rpc.next(self.settings.idle_timeout_ms) {
                Ok(message) => message,
                Err(e) if e.is_turn_aborted() && self.running.is_some() => {
                    // Interrupt Codex's turn; `turn/completed` then says
                    // `interrupted` (within the host's grace).
                    if let Some((thread, turn)) = self.running.take() {
                        self.rpc
                            .request(
                                "turn/interrupt",
                                json!({"threadId": thread, "turnId": turn}),
                            )
                            .map_err(|e| failed("turn/interrupt", e))?;
                    }
                    continue;
                }
                Err(e) => return Err(failed("turn", e)),
            };
            let (method, params) = match message {
                Incoming::Request { id, method, params } => {
                    self.serve(id, &method, &params)?;
                    continue;
                }
                Incoming::Response { .. } => continue,
                Incoming::Notification { method, params } => (method, params),
            };
            match method.as_str() {
                "item/agentMessage/delta" => {
                    if let Some(delta) = params["delta"].as_str() {
                        native::stream_text(self.turn, delta);
                    }
                }
                "item/started" if params["item"]["type"] == "contextCompaction" => {
                    native::compaction(self.turn, CompactionPhase::Started);
                }
                "item/completed" => self.completed(&params["item"], &mut answer),
                "turn/completed" => {
                    let turn = &params["turn"];
                    return match turn["status"].as_str() {
                        Some("completed") => Ok(answer),
                        Some("interrupted") if self.running.is_none() => Err(AttemptError::Failed(
                            "the turn was aborted; Codex interrupted its turn (turn/interrupt)"
                                .into(),
                        )),
                        status => Err(AttemptError::Failed(format!(
                            "the Codex turn ended {}: {}",
                            status.unwrap_or("without a status"),
                            turn["error"]["message"]
                                .as_str()
                                .unwrap_or("no reason given")
                        ))),
                    };
                }
                _ => {}
            }
        }
    }

    /// Mirror a finished item: a message, or a command Codex ran itself.
    fn completed(&self, item: &Value, answer: &mut String) {
        let text = |key: &str| item[key].as_str().unwrap_or_default().to_string();
        match item["type"].as_str() {
            Some("agentMessage") => {
                *answer = text("text");
                native::record_reply(self.turn, answer, &[]);
            }
            // Codex compacted its thread: the host's compaction hooks hear
            // of it; the mirror keeps every message.
            Some("contextCompaction") => native::compaction(self.turn, CompactionPhase::Completed),
            Some("commandExecution") => {
                let call = ToolRequest {
                    id: text("id"),
                    name: "exec".into(),
                    arguments:
                        json!({"command": plain_command(&text("command")), "cwd": text("cwd")})
                            .to_string(),
                };
                native::record_reply(self.turn, "", std::slice::from_ref(&call));
                let ok = item["status"] == "completed" && item["exitCode"] == 0;
                let output = match item["exitCode"].as_i64() {
                    Some(code) => format!("exit code {code}\n{}", text("aggregatedOutput")),
                    None => format!("{}: {}", text("status"), text("aggregatedOutput")),
                };
                native::record_tool_result(self.turn, &call.id, "exec", &output, !ok);
            }
            _ => {}
        }
    }

    /// Answer a request of the server: a host tool call, or an approval.
    fn serve(&mut self, id: Value, method: &str, params: &Value) -> Result<(), AttemptError> {
        let sent = match method {
            "item/tool/call" => {
                let call = ToolRequest {
                    id: params["callId"].as_str().unwrap_or_default().into(),
                    name: params["tool"].as_str().unwrap_or_default().into(),
                    arguments: params["arguments"].to_string(),
                };
                native::record_reply(self.turn, "", std::slice::from_ref(&call));
                let output = self.turn.call_tool(&call);
                self.rpc.respond(
                    id,
                    json!({
                        "contentItems": [{"type": "inputText", "text": output.content}],
                        "success": !output.is_error,
                    }),
                )
            }
            "item/commandExecution/requestApproval" => {
                let command = plain_command(params["command"].as_str().unwrap_or_default());
                let args =
                    json!({"command": command, "cwd": params["cwd"].as_str().unwrap_or_default()});
                let decision = self.ask(params, "exec", args);
                self.rpc.respond(id, json!({"decision": decision}))
            }
            "item/fileChange/requestApproval" => {
                let args = json!({"input": params["reason"].as_str().unwrap_or_default()});
                let decision = self.ask(params, "apply_patch", args);
                self.rpc.respond(id, json!({"decision": decision}))
            }
            // Anything else (user input, elicitations, sign-in) this bridge
            // cannot answer for the user: refused, so Codex goes on.
            other => self.rpc.refuse(
                id,
                &format!("clawhost's codex bridge does not serve `{other}`"),
            ),
        };
        sent.map_err(|e| failed(method, e))
    }

    /// Ask the host about a native call: `accept` or `decline`.
    fn ask(&self, params: &Value, tool: &str, arguments: Value) -> &'static str {
        let request = ToolRequest {
            id: params["itemId"].as_str().unwrap_or_default().into(),
            name: tool.into(),
            arguments: arguments.to_string(),
        };
        match native::gate_tool(self.turn, &request) {
            Verdict::Allow(_) => "accept",
            Verdict::Deny(_) => "decline",
        }
    }
}

/// The command Codex runs without the shell wrapper it adds
/// (`/bin/bash -lc 'touch x'` → `touch x`), so the host's exec allowlist and
/// policy plugins see what the model asked for. Anything else is kept whole.
fn plain_command(command: &str) -> &str {
    let inner = ["/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c "]
        .iter()
        .find_map(|shell| command.strip_prefix(shell));
    match inner.and_then(|rest| rest.strip_prefix('\'')?.strip_suffix('\'')) {
        Some(quoted) if !quoted.contains('\'') => quoted,
        _ => command,
    }
}

/// A host tool as a Codex dynamic tool.
fn dynamic_tool(spec: &ToolSpec) -> Value {
    let schema: Value =
        serde_json::from_str(&spec.parameters).unwrap_or_else(|_| json!({"type": "object"}));
    json!({
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "inputSchema": schema,
    })
}

/// `codex app-server <version>`, from the `userAgent` the server reports
/// (`<client>/<version> (...)`).
fn agent_name(info: &Value) -> String {
    let version = info["userAgent"]
        .as_str()
        .and_then(|ua| ua.split_whitespace().next())
        .and_then(|first| first.split_once('/'))
        .map_or("(version unknown)", |(_, v)| v);
    format!("codex app-server {version}")
}

clawhost_sdk::export_harness!(Codex);
