//! The `codex` runtime beside driving the same Codex app-server directly, in
//! one run against one fake OpenAI Responses server on loopback (each turn:
//! one streamed reply; the tool rounds add one dynamic tool call):
//! - a minimal JSON-RPC client keeping one app-server for every turn (what a
//!   user scripting Codex would write);
//! - the same client starting an app-server per turn and resuming the thread
//!   (what the bridge does: the process lives for its turn);
//! - clawhost: `run_session_turn` on runtime `codex` (the sandboxed bridge,
//!   the host's dispatch path, the mirror).
//!
//! Per-turn overhead of the bridge = clawhost − the per-turn client; per
//! bridged tool call = (clawhost with a call − without) − (client with a
//! call − without).
//!
//! Run: `cargo bench -p clawhost-tests --bench runtimes` (BENCHMARKS.md
//! records one run).

use std::path::Path;
use std::time::{Duration, Instant};

use clawhost_agent_core::RunContext;
use clawhost_llm::ModelRuntimes;
use clawhost_tests::agents::{fake_model_args, text_answer, tool_call, CodexDirs};
use clawhost_tests::fake_provider::FakeProvider;
use clawhost_tests::{config, npm, runner_with};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TURNS: usize = 30;

/// A minimal app-server client: one process, JSON-RPC lines.
struct Direct {
    child: Child,
    stdin: ChildStdin,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
    next: i64,
}

impl Direct {
    async fn start(codex: &Path, args: &[String], home: &Path, workspace: &Path) -> Self {
        let mut child = Command::new(codex)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("CODEX_HOME", home)
            .env("HOME", home)
            .env("FAKE_KEY", "sk-test")
            .current_dir(workspace)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut me = Self {
            child,
            stdin,
            stdout,
            next: 1,
        };
        me.call(
            "initialize",
            json!({"clientInfo": {"name": "bench", "version": "1"},
                                      "capabilities": {"experimentalApi": true}}),
        )
        .await;
        me.send(json!({"method": "initialized"})).await;
        me
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }

    /// A request and its result; tool calls meanwhile are answered at once.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.read().await;
            if message["id"] == id && message.get("method").is_none() {
                return message["result"].clone();
            }
        }
    }

    async fn read(&mut self) -> Value {
        let line = self.stdout.next_line().await.unwrap().expect("a line");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "item/tool/call" {
            let answer = json!({"id": message["id"], "result": {
                "contentItems": [{"type": "inputText", "text": "{\"words\":2}"}], "success": true}});
            self.send(answer).await;
        }
        message
    }

    async fn thread(&mut self, resume: Option<&str>) -> String {
        let tools = json!([{"type": "function", "name": "word_count", "description": "Count words",
                             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]);
        let result = match resume {
            Some(id) => self.call("thread/resume", json!({"threadId": id, "model": "gpt-5.1"})).await,
            None => {
                self.call("thread/start", json!({"model": "gpt-5.1", "approvalPolicy": "untrusted",
                                                 "sandbox": "workspace-write", "dynamicTools": tools}))
                    .await
            }
        };
        result["thread"]["id"].as_str().unwrap().to_string()
    }

    async fn turn(&mut self, thread: &str) {
        self.call(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
        while self.read().await["method"] != "turn/completed" {}
    }

    async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

fn per_turn(total: Duration) -> Duration {
    total / TURNS as u32
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn push_turns(fake: &FakeProvider, with_tool: bool) {
    for _ in 0..TURNS {
        if with_tool {
            fake.push(tool_call("call_wc", "word_count", json!({"text": "a b"})));
        }
        fake.push(text_answer("msg", &["Hello ", "there."]));
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let dirs = CodexDirs::new(dir.path());
    let (home, workspace) = (&dirs.home, &dirs.workspace);
    let codex = npm::bin(npm::CODEX, "codex");
    let mut args = vec!["app-server".to_string()];
    args.extend(fake_model_args(&fake));

    let cfg = config(
        json!({
            "models": {"providers": {"fake": {
                "baseUrl": format!("{}/v1", fake.url()), "api": "openai-responses", "apiKey": "sk-test",
                "models": [{"id": "gpt-5.1", "agentRuntime": {"id": "codex"}}]}}},
            "agents": {"defaults": {"model": "fake/gpt-5.1"}},
            "plugins": {"entries": {"codex": {"grants": {"harness": true, "processes": {"app-server": {
                "command": codex.to_string_lossy(), "args": args,
                "env": dirs.env(),
                "cwd": workspace.to_string_lossy()}}}}}}
        }),
        dir.path(),
    );
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&cfg).unwrap();
    let runner = runner_with(cfg, &["codex", "text-tools"]).await;
    let generation = runtimes.current("main").unwrap();

    println!(
        "{TURNS} turns each, one streamed reply per turn (plus one tool call in the tool rows)"
    );
    for with_tool in [false, true] {
        let label = if with_tool {
            "with a tool call"
        } else {
            "text only"
        };

        // A client keeping one app-server.
        push_turns(&fake, with_tool);
        let mut direct = Direct::start(&codex, &args, home, workspace).await;
        let thread = direct.thread(None).await;
        let started = Instant::now();
        for _ in 0..TURNS {
            direct.turn(&thread).await;
        }
        let kept = per_turn(started.elapsed());
        direct.stop().await;

        // The same client, one app-server per turn, resuming the thread.
        push_turns(&fake, with_tool);
        let mut thread = None::<String>;
        let started = Instant::now();
        for _ in 0..TURNS {
            let mut direct = Direct::start(&codex, &args, home, workspace).await;
            let id = direct.thread(thread.as_deref()).await;
            direct.turn(&id).await;
            direct.stop().await;
            thread = Some(id);
        }
        let fresh = per_turn(started.elapsed());

        // clawhost on runtime `codex`.
        push_turns(&fake, with_tool);
        let mut session = clawhost_runner::Session::new("bench", "main");
        let started = Instant::now();
        for _ in 0..TURNS {
            let ctx = RunContext::new("main", "fake/gpt-5.1");
            runner
                .run_session_turn(&mut session, generation.clone(), &ctx, "hi")
                .await
                .unwrap();
        }
        let bridged = per_turn(started.elapsed());
        println!(
            "{label}: client, one app-server {} | client, app-server per turn {} | clawhost codex {} | bridge overhead per turn {}",
            ms(kept),
            ms(fresh),
            ms(bridged),
            ms(bridged.saturating_sub(fresh))
        );
    }
}
