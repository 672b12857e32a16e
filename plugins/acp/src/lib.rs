//! `acp`: an agent speaking the Agent Client Protocol (Codex through
//! `codex-acp`, Claude Code, Gemini CLI…) as a clawhost agent runtime,
//! bridged from a sandboxed plugin. The operator grants the agent's process
//! (`grants.processes.agent`); this plugin is its ACP client for one turn at
//! a time:
//!
//! - `initialize`, then `session/load` of the session stored on the host's
//!   session (when the agent can load sessions) or `session/new` in the
//!   configured workspace;
//! - `session/prompt` with the user's text; `agent_message_chunk` updates
//!   stream to the user; the agent's tool calls and their results are
//!   recorded in the host's mirror of the session;
//! - an aborted turn sends `session/cancel` (the host says so through the
//!   process's `recv`) and waits for the prompt to answer `cancelled`, so
//!   the agent keeps the turn in its session;
//! - `session/request_permission` is asked of the host: an `execute` call as
//!   `exec` (`{"command": ...}`), an `edit` as `apply_patch`, anything else as
//!   `acp_<kind>`, through tool policy, `before_tool_call` and the operator's
//!   approvals; the agent gets the allow-once or reject-once option it
//!   offered (a call to the `hostTools` server is allowed here: that server
//!   applies the policy itself);
//! - with `hostTools: "turn"`, the session gets the turn's own tools as an
//!   HTTP MCP server the host serves for the turn (`native::tool_endpoint`):
//!   each call takes the turn's dispatch path (policy, hooks, the turn's
//!   approvals) and the host records it in the mirror; with `hostTools` a
//!   command (`{command, args, env}`: usually `clawhost mcp serve`), that
//!   stdio server, which applies policy, hooks and approvals itself.
//!
//! - `fs/write_text_file` (offered unless `fs` is `false`) runs the host's
//!   `write` tool through the turn's dispatch path (policy, hooks,
//!   approvals; confined to the agent's host workspace), recorded in the
//!   mirror as the agent's call. `fs/read_text_file` is not offered: the
//!   host's `read` shows files to a model (numbered, capped), not byte for
//!   byte, and an agent that edits what it read must get the file exactly;
//!   nor is `terminal/*`: the agents run their own commands, each asked
//!   about through a permission request.
//!
//! Config (`plugins.entries.acp.config`): `cwd` (required, absolute),
//! `mode` (a session mode to set: `session/set_mode`),
//! `providers` (the model providers whose routes select this runtime),
//! `startTimeoutMs` (30 s), `idleTimeoutMs` (10 min), `hostTools`
//! (`"turn"`, or `{command, args, env}` of the MCP server handed to the
//! agent), `fs`
//! (default `true`: the client's `fs/write_text_file` above).

use clawhost_sdk::native::{self, Incoming, Rpc, Verdict, WireError};
use clawhost_sdk::{
    config, AttemptError, Claim, Harness, PreparedTurn, Route, Support, ToolRequest, Turn,
};
use serde_json::{json, Value};

/// The process this plugin opens (the manifest asks for it by this name).
const PROCESS: &str = "agent";

/// The ACP version this client speaks.
const PROTOCOL_VERSION: u64 = 1;

#[derive(Default)]
struct Acp;

/// The operator's settings, with defaults.
struct Settings {
    cwd: Option<String>,
    mode: Option<String>,
    providers: Vec<String>,
    start_timeout_ms: u32,
    idle_timeout_ms: u32,
    /// ACP `mcpServers` for a session: clawhost's tools when `hostTools` is
    /// a command.
    mcp_servers: Value,
    /// `hostTools: "turn"`: the turn's own tools, served by the host.
    turn_tools: bool,
    /// Whether the client offers `fs/write_text_file`.
    fs: bool,
}

impl Settings {
    fn read() -> Self {
        let c = config();
        let ms = |key: &str, default: u32| {
            c[key]
                .as_u64()
                .map_or(default, |v| u32::try_from(v).unwrap_or(u32::MAX))
        };
        Self {
            cwd: c["cwd"].as_str().map(String::from),
            mode: c["mode"].as_str().map(String::from),
            providers: c["providers"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            start_timeout_ms: ms("startTimeoutMs", 30_000),
            idle_timeout_ms: ms("idleTimeoutMs", 600_000),
            mcp_servers: mcp_servers(&c["hostTools"]),
            turn_tools: c["hostTools"] == "turn",
            fs: c["fs"].as_bool().unwrap_or(true),
        }
    }
}

impl Harness for Acp {
    fn id(&self) -> String {
        "acp".into()
    }

    fn supports(&self, route: Route) -> Support {
        if Settings::read().providers.contains(&route.provider) {
            Support::Supported(Claim {
                priority: 0,
                reason: format!(
                    "provider `{}` is listed in plugins.entries.acp.config.providers",
                    route.provider
                ),
            })
        } else {
            Support::Unsupported(format!(
                "provider `{}` is not listed in plugins.entries.acp.config.providers",
                route.provider
            ))
        }
    }

    fn run_attempt(&self, turn: &Turn, prepared: PreparedTurn) -> Result<String, AttemptError> {
        let settings = Settings::read();
        let Some(cwd) = settings.cwd.clone() else {
            return Err(AttemptError::Failed(
                "set plugins.entries.acp.config.cwd to the agent's workspace (an absolute path)"
                    .into(),
            ));
        };
        let process = native::open_process(turn, PROCESS)
            .map_err(|e| failed("start", WireError::Process(e)))?;
        let mut client = Client {
            rpc: Rpc::v2(process),
            turn,
            settings,
            cwd,
            calls: Vec::new(),
            text: String::new(),
            refused: None,
            session: None,
            cancelling: false,
            servers: json!([]),
        };
        client.run(&prepared)
    }
}

/// The ACP `mcpServers` list (stdio entries) for a `hostTools` command:
/// one server named `clawhost`, or none.
fn mcp_servers(tools: &Value) -> Value {
    let Some(command) = tools["command"].as_str() else {
        return json!([]);
    };
    let env: Vec<Value> = tools["env"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| json!({"name": name, "value": value.as_str().unwrap_or_default()}))
        .collect();
    json!([{
        "name": "clawhost",
        "command": command,
        "args": tools.get("args").cloned().unwrap_or_else(|| json!([])),
        "env": env,
    }])
}

fn failed(doing: &str, error: WireError) -> AttemptError {
    AttemptError::Failed(format!("the ACP agent ({doing}): {error}"))
}

/// One turn's conversation with the agent.
struct Client<'a> {
    rpc: Rpc,
    turn: &'a Turn,
    settings: Settings,
    cwd: String,
    /// The agent's tool calls seen this turn: (id, host tool name).
    calls: Vec<(String, String)>,
    /// Reply text since the last tool call.
    text: String,
    /// The last call the host refused: (tool, why).
    refused: Option<(String, String)>,
    /// The agent's session, once open.
    session: Option<String>,
    /// Set once the host said the turn was aborted and `session/cancel`
    /// was sent: permission requests are answered `cancelled`.
    cancelling: bool,
    /// The `mcpServers` handed the agent this turn.
    servers: Value,
}

impl Client<'_> {
    fn run(&mut self, prepared: &PreparedTurn) -> Result<String, AttemptError> {
        let start = self.settings.start_timeout_ms;
        let init = self.call(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": false, "writeTextFile": self.settings.fs},
                    "terminal": false,
                },
                "clientInfo": {"name": "clawhost", "version": clawhost_sdk::API_VERSION},
            }),
            start,
        )?;
        let agent = agent_name(&init);
        self.servers = if self.settings.turn_tools {
            // The host serves this turn's tools over HTTP for the turn.
            let endpoint = native::tool_endpoint(self.turn).map_err(AttemptError::Failed)?;
            json!([{
                "type": "http",
                "name": "clawhost",
                "url": endpoint.url,
                "headers": [{"name": "Authorization", "value": format!("Bearer {}", endpoint.token)}],
            }])
        } else {
            self.settings.mcp_servers.clone()
        };
        let can_load = init["agentCapabilities"]["loadSession"] == true;
        let stored = native::thread_id(self.turn).filter(|_| can_load);
        let fresh = stored.is_none();
        let session = match stored {
            Some(id) => {
                self.call(
                    "session/load",
                    json!({"sessionId": id, "cwd": self.cwd, "mcpServers": self.servers}),
                    start,
                )?;
                id
            }
            _ => {
                let opened = self.call(
                    "session/new",
                    json!({"cwd": self.cwd, "mcpServers": self.servers}),
                    start,
                )?;
                opened["sessionId"]
                    .as_str()
                    .map(String::from)
                    .ok_or_else(|| {
                        AttemptError::Failed(
                            "the ACP agent answered session/new without a sessionId".into(),
                        )
                    })?
            }
        };
        native::set_thread(self.turn, &session, &agent);
        self.session = Some(session.clone());
        if let Some(mode) = self.settings.mode.clone() {
            self.call(
                "session/set_mode",
                json!({"sessionId": session, "modeId": mode}),
                start,
            )?;
        }
        let mut prompt = vec![json!({"type": "text", "text": prepared.user_text})];
        if let (Some(system), true) = (&prepared.system, fresh) {
            // ACP has no system prompt: a new session's first prompt starts
            // with the host's, as context.
            prompt.insert(0, json!({"type": "text", "text": system}));
        }
        let done = self.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": prompt}),
            self.settings.idle_timeout_ms,
        )?;
        let answer = std::mem::take(&mut self.text);
        native::record_reply(self.turn, &answer, &[]);
        let reason = done["stopReason"]
            .as_str()
            .unwrap_or("no stop reason given");
        match (reason, self.refused.take()) {
            ("end_turn" | "max_tokens" | "max_turn_requests", _) => Ok(answer),
            ("cancelled", _) if self.cancelling => Err(AttemptError::Failed(
                "the turn was aborted; the ACP agent stopped its turn (session/cancel)".into(),
            )),
            // Some agents end the turn when a call is refused (codex-acp
            // offers only "abort" as the way to say no).
            ("cancelled", Some((tool, why))) => Err(AttemptError::Failed(format!(
                "the ACP agent ended the turn after the host refused its `{tool}` call: {why}"
            ))),
            (reason, _) => Err(AttemptError::Failed(format!(
                "the ACP agent stopped the turn: {reason}"
            ))),
        }
    }

    /// Make a request and wait for its response, serving the agent's
    /// requests and following its updates meanwhile.
    fn call(&mut self, method: &str, params: Value, timeout: u32) -> Result<Value, AttemptError> {
        let id = self
            .rpc
            .request(method, params)
            .map_err(|e| failed(method, e))?;
        loop {
            let incoming = match self.rpc.next(timeout) {
                Ok(incoming) => incoming,
                Err(e) if e.is_turn_aborted() && !self.cancelling => {
                    // Stop the agent's turn; its prompt then answers
                    // `cancelled` (within the host's grace).
                    self.cancelling = true;
                    if let Some(session) = &self.session {
                        self.rpc
                            .notify("session/cancel", json!({"sessionId": session}))
                            .map_err(|e| failed(method, e))?;
                    }
                    continue;
                }
                Err(e) => return Err(failed(method, e)),
            };
            match incoming {
                Incoming::Response { id: got, result } if got == id => {
                    return result.map_err(|message| {
                        AttemptError::Failed(format!("the ACP agent refused {method}: {message}"))
                    })
                }
                Incoming::Response { .. } => {}
                Incoming::Notification { method: m, params } if m == "session/update" => {
                    // A loaded session's history is replayed: the host has it.
                    if method != "session/load" {
                        self.update(&params["update"]);
                    }
                }
                Incoming::Notification { .. } => {}
                Incoming::Request {
                    id,
                    method: m,
                    params,
                } => self.serve(id, &m, &params)?,
            }
        }
    }

    /// Follow one `session/update`.
    fn update(&mut self, update: &Value) {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        match update["sessionUpdate"].as_str() {
            Some("agent_message_chunk") if update["content"]["type"] == "text" => {
                let piece = text(&update["content"]["text"]);
                native::stream_text(self.turn, &piece);
                self.text.push_str(&piece);
            }
            // A call the host serves for this turn is recorded by the host,
            // call and result (after the text before it).
            Some("tool_call") if self.settings.turn_tools && self.host_served(update) => {
                self.flush_text();
            }
            Some("tool_call") => {
                let id = text(&update["toolCallId"]);
                if !self.calls.iter().any(|(seen, _)| *seen == id) {
                    self.begin_call(id, update);
                }
            }
            Some("tool_call_update") => {
                let id = text(&update["toolCallId"]);
                let status = update["status"].as_str();
                if !matches!(status, Some("completed" | "failed")) {
                    return;
                }
                let Some(pos) = self.calls.iter().position(|(seen, _)| *seen == id) else {
                    return;
                };
                let (id, tool) = self.calls.remove(pos);
                native::record_tool_result(
                    self.turn,
                    &id,
                    &tool,
                    &output_text(update),
                    status == Some("failed"),
                );
            }
            _ => {}
        }
    }

    /// Mirror the reply text so far, if any.
    fn flush_text(&mut self) {
        if !self.text.is_empty() {
            native::record_reply(self.turn, &std::mem::take(&mut self.text), &[]);
        }
    }

    /// Mirror the start of a tool call of the agent's (after any text).
    fn begin_call(&mut self, id: String, update: &Value) {
        self.flush_text();
        let call = host_call(&id, update);
        native::record_reply(self.turn, "", std::slice::from_ref(&call));
        self.calls.push((id, call.name));
    }

    /// Whether a permission request asks about a call to the MCP server
    /// `hostTools` handed the agent. ACP does not say how an agent names
    /// the server: Codex puts it in `rawInput.server_name` (a permission
    /// request) or `rawInput.server` (a tool call), Claude Code in
    /// `_meta.claudeCode.mcpServer.name`.
    fn for_host_tools(&self, params: &Value) -> bool {
        self.host_served(&params["toolCall"])
    }

    /// Whether `call` (a permission request's or an update's) is one to
    /// the `clawhost` MCP server handed the agent.
    fn host_served(&self, call: &Value) -> bool {
        self.servers.as_array().is_some_and(|s| !s.is_empty())
            && (call["rawInput"]["server_name"] == "clawhost"
                || call["rawInput"]["server"] == "clawhost"
                || call["_meta"]["claudeCode"]["mcpServer"]["name"] == "clawhost")
    }

    /// Answer a request of the agent's.
    fn serve(&mut self, id: Value, method: &str, params: &Value) -> Result<(), AttemptError> {
        let sent = match method {
            "session/request_permission" if self.cancelling => {
                // After session/cancel, ACP asks the client to answer every
                // pending permission request `cancelled`.
                self.rpc
                    .respond(id, json!({"outcome": {"outcome": "cancelled"}}))
            }
            "session/request_permission" if self.for_host_tools(params) => {
                // A call to clawhost's own MCP server: `clawhost mcp serve`
                // applies policy, hooks and approvals to it itself.
                self.rpc
                    .respond(id, json!({"outcome": chosen(params, "allow_once")}))
            }
            "session/request_permission" => {
                let call = host_call(
                    params["toolCall"]["toolCallId"]
                        .as_str()
                        .unwrap_or_default(),
                    &params["toolCall"],
                );
                let allowed = match native::gate_tool(self.turn, &call) {
                    Verdict::Allow(_) => true,
                    Verdict::Deny(why) => {
                        self.refused = Some((call.name.clone(), why));
                        false
                    }
                };
                let wanted = if allowed { "allow_once" } else { "reject_once" };
                self.rpc
                    .respond(id, json!({"outcome": chosen(params, wanted)}))
            }
            "fs/write_text_file" if self.settings.fs => self.write_file(id, params),
            other => self.rpc.refuse(
                id,
                &format!("clawhost's ACP client does not offer `{other}`"),
            ),
        };
        sent.map_err(|e| failed(method, e))
    }

    /// Serve `fs/write_text_file` with the host's `write` tool, called
    /// through the turn's dispatch path.
    fn write_file(&mut self, id: Value, params: &Value) -> Result<(), WireError> {
        let call = ToolRequest {
            id: format!("fs-write-{id}"),
            name: "write".into(),
            arguments: json!({"path": params["path"], "content": params["content"]}).to_string(),
        };
        native::record_reply(self.turn, "", std::slice::from_ref(&call));
        let output = self.turn.call_tool(&call);
        if output.is_error {
            self.rpc.fail(id, -32603, &output.content)
        } else {
            self.rpc.respond(id, json!({}))
        }
    }
}

/// The permission request's option of `kind` as the outcome, or
/// `cancelled` when the agent offered none of that kind.
fn chosen(params: &Value, kind: &str) -> Value {
    let option = params["options"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["kind"] == kind)
        .and_then(|o| o["optionId"].as_str());
    match option {
        Some(option) => json!({"outcome": "selected", "optionId": option}),
        None => json!({"outcome": "cancelled"}),
    }
}

/// An agent's tool call as the host tool it resembles: `execute` → `exec`
/// with the command (a shell wrapper taken off), `edit` → `apply_patch`,
/// anything else `acp_<kind>` with its raw input.
fn host_call(id: &str, call: &Value) -> ToolRequest {
    let raw = &call["rawInput"];
    let (name, arguments) = match call["kind"].as_str() {
        Some("execute") => {
            let command = match &raw["command"] {
                Value::Array(words) => {
                    let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                    match words.as_slice() {
                        [shell, flag, script] if shell.ends_with("sh") && flag.ends_with('c') => {
                            script.to_string()
                        }
                        _ => words.join(" "),
                    }
                }
                Value::String(command) => command.clone(),
                _ => call["title"].as_str().unwrap_or_default().to_string(),
            };
            (
                "exec".to_string(),
                json!({"command": command, "cwd": raw["cwd"].as_str().unwrap_or_default()}),
            )
        }
        Some("edit") => ("apply_patch".to_string(), json!({"input": raw.to_string()})),
        kind => (format!("acp_{}", kind.unwrap_or("other")), raw.clone()),
    };
    ToolRequest {
        id: id.into(),
        name,
        arguments: arguments.to_string(),
    }
}

/// A finished tool call's output as text: its text content, else its raw output.
fn output_text(update: &Value) -> String {
    let texts: Vec<&str> = update["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    match &update["rawOutput"] {
        Value::Null => String::new(),
        raw => raw["aggregated_output"]
            .as_str()
            .map_or_else(|| raw.to_string(), String::from),
    }
}

/// `<name> <version>` as the agent reports itself (`agentInfo`).
fn agent_name(init: &Value) -> String {
    let info = &init["agentInfo"];
    let name = info["title"]
        .as_str()
        .or(info["name"].as_str())
        .unwrap_or("ACP agent");
    match info["version"].as_str() {
        Some(version) => format!("{name} {version}"),
        None => name.to_string(),
    }
}

clawhost_sdk::export_harness!(Acp);
