//! Shared helpers for the integration tests: the plugins built from source,
//! configs that load them, and a fake model provider speaking real wire formats.

pub mod agents;
pub mod fake_provider;
pub mod gateway;
pub mod npm;
pub mod postgres;
pub mod python;
pub mod wire;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use clawhost_agent_core::{RunContext, ToolCallRequest, ToolExecutor, ToolOutput};
use clawhost_config::Config;
use clawhost_hooks::CallContext;
use clawhost_plugin_runtime::{CallError, LoadError, PluginHost};
use clawhost_runner::EmbeddedRunner;
use serde_json::{json, Value};

/// The directory of plugin packages built from `plugins/` (built once per test binary).
pub fn plugins_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        clawhost::build::build_plugins(None).expect("building the plugins from source")
    })
}

/// Copy a built plugin package (its manifest and `plugin.wasm`) to `to`.
pub fn copy_package(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["openclaw.plugin.json", "plugin.wasm"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}

/// A shared compiled-component cache for tests, under `target/`.
pub fn cache_dir() -> PathBuf {
    clawhost::build::repo_root()
        .join("target")
        .join("component-cache")
}

/// A config from JSON whose relative paths resolve against `base`, loading
/// plugins from [`plugins_dir`] with the test cache, and offering the `echo`
/// fixture tool.
pub fn config(json: Value, base: &Path) -> Config {
    let mut config = Config::from_json_str(&json.to_string(), base).expect("valid test config");
    config.tools.test_fixtures = true;
    config.plugins.paths = vec![plugins_dir().to_path_buf()];
    config.plugins.cache_dir = Some(cache_dir());
    config.plugins.cache_key_file = Some(cache_key_file());
    config
}

/// The `clawhost` binary `cargo test --workspace` built beside this test
/// (for the programs a test hands it to, as an agent runtime's MCP server).
pub fn clawhost_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|debug| debug.join("clawhost"))
        .expect("target/<profile>/deps/<test>");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build -p clawhost` (`cargo test --workspace` builds it)",
        bin.display()
    );
    bin
}

/// One turn of `session` with `prompt` on its agent's current generation,
/// under a fresh run context for `model_ref`: the outcome, and the context
/// (its events).
pub async fn session_turn(
    runner: &EmbeddedRunner,
    runtimes: &clawhost_llm::ModelRuntimes,
    session: &mut clawhost_runner::Session,
    model_ref: &str,
    prompt: &str,
) -> (
    Result<clawhost_agent_core::TurnOutcome, clawhost_runner::RunError>,
    RunContext,
) {
    let ctx = RunContext::new(session.agent_id.clone(), model_ref);
    let generation = runtimes
        .current(&session.agent_id)
        .expect("the agent's model runtime generation is built");
    let outcome = runner
        .run_session_turn(session, generation, &ctx, prompt)
        .await;
    (outcome, ctx)
}

/// `clawhost --config <config> chat` fed the lines of `script` (which
/// should end with `/quit`): its standard output, then its standard error.
pub async fn chat(config: &Path, script: &str) -> (String, String) {
    use tokio::io::AsyncWriteExt;
    let mut chat = tokio::process::Command::new(clawhost_bin())
        .arg("--config")
        .arg(config)
        .arg("chat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("clawhost chat starts");
    let mut stdin = chat.stdin.take().expect("piped");
    stdin
        .write_all(script.as_bytes())
        .await
        .expect("chat reads");
    drop(stdin);
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), chat.wait_with_output())
        .await
        .expect("chat ends at /quit")
        .expect("chat ran");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The key of the shared test cache (outside the cache dir, as the host requires).
pub fn cache_key_file() -> PathBuf {
    clawhost::build::repo_root()
        .join("target")
        .join("component-cache.key")
}

/// A plugin host with only the named plugin packages (crate directory names) loaded.
pub async fn host_with(config: &Config, packages: &[&str]) -> Result<PluginHost, LoadError> {
    let mut host = PluginHost::new(config)?;
    for package in packages {
        host.load_package(&plugins_dir().join(package)).await?;
    }
    Ok(host)
}

/// A runner over a host with the named packages.
pub async fn runner_with(config: Config, packages: &[&str]) -> EmbeddedRunner {
    let host = host_with(&config, packages).await.expect("plugins load");
    EmbeddedRunner::from_plugins(config, host).expect("tools register")
}

/// Run one tool call through the runner's dispatcher.
pub async fn dispatch(
    runner: &EmbeddedRunner,
    tool: &str,
    args: Value,
) -> (ToolOutput, RunContext) {
    let ctx = RunContext::new("test", "scripted/test");
    let call = ToolCallRequest {
        id: "call_1".into(),
        name: tool.into(),
        arguments: args,
    };
    let out = runner.dispatcher().execute(&call, &ctx).await;
    (out, ctx)
}

/// Parse a successful tool output as JSON.
pub fn json_of(out: &ToolOutput) -> Value {
    assert!(
        !out.is_error,
        "expected success, got error: {}",
        out.content
    );
    serde_json::from_str(&out.content).expect("tool output is JSON")
}

/// The call context the tests hand plugins.
pub fn call_context() -> CallContext {
    CallContext {
        agent_id: "test".into(),
        session_id: None,
        model_ref: "scripted/test".into(),
    }
}

/// Call one plugin's tool directly (no dispatcher, no hooks).
pub async fn call_tool(
    host: &PluginHost,
    plugin: &str,
    tool: &str,
    params: Value,
) -> Result<Result<Value, clawhost_agent_core::ToolError>, CallError> {
    host.plugin(plugin)
        .unwrap_or_else(|| panic!("plugin `{plugin}` is loaded"))
        .call_tool(tool, "c", &params, &call_context())
        .await
}

/// The persist and start hooks of a word-tools example plugin (Python or
/// JavaScript), configured with `"hideInTranscript": ["hunter2"], "stopWord":
/// "halt"`: the stored text hides the word, and a message with the stop word
/// does not start.
pub async fn check_persist_and_start_hooks(runner: &EmbeddedRunner, plugin: &str) {
    use clawhost_hooks::{AgentStartEvent, ToolResultPersistEvent};
    let stored = runner
        .hooks()
        .tool_result_persist(ToolResultPersistEvent {
            tool: "read".into(),
            call_id: "c".into(),
            content: "password hunter2".into(),
            is_error: false,
            context: call_context(),
        })
        .await
        .stored;
    assert_eq!(stored.as_deref(), Some("password [hidden]"));
    let start = |prompt: &str| AgentStartEvent {
        run_id: "r".into(),
        session_id: None,
        agent_id: "main".into(),
        model_ref: "m/x".into(),
        prompt: prompt.into(),
    };
    let run = runner
        .hooks()
        .before_agent_start(start("please halt"))
        .await;
    assert_eq!(
        run.blocked,
        Some(format!(
            "plugin `{plugin}` stopped the run: {plugin}: the message contains `halt`"
        ))
    );
    let run = runner.hooks().before_agent_start(start("go on")).await;
    assert!(run.blocked.is_none());
}

/// The turn hooks of a word-tools example plugin, configured with
/// `"cannedReplies": {"ping": "pong"}, "mustMention": "banana"` (and
/// `hooks.allowConversationAccess`): it answers `ping`, lets other messages
/// run, and sends an answer without `banana` back for one more pass.
pub async fn check_turn_hooks(runner: &EmbeddedRunner, plugin: &str) {
    use clawhost_hooks::{AgentFinalizeEvent, AgentRunEvent, FinalizeDecision};
    let turn = |prompt: &str| AgentRunEvent {
        session_id: None,
        agent_id: "main".into(),
        runtime: "codex".into(),
        model_ref: "m/x".into(),
        prompt: prompt.into(),
    };
    let run = runner.hooks().before_agent_reply(&turn("ping")).await;
    assert_eq!(run.decided, Some((plugin.to_string(), "pong".to_string())));
    let run = runner.hooks().before_agent_reply(&turn("hello")).await;
    assert_eq!(run.decided, None);
    let finalize = |answer: &str| AgentFinalizeEvent {
        run: turn("fruit?"),
        answer: answer.into(),
        revisions: 0,
    };
    let run = runner
        .hooks()
        .before_agent_finalize(&finalize("an apple"))
        .await;
    assert_eq!(
        run.decided,
        Some((
            plugin.to_string(),
            FinalizeDecision::Revise("Please mention banana.".into())
        ))
    );
    let run = runner
        .hooks()
        .before_agent_finalize(&finalize("a banana"))
        .await;
    assert_eq!(run.decided, None);
}

/// `plugin`'s prepare hooks (its config's `turnContext` and `execEnv`):
/// `agent_turn_prepare` puts `[<runtime>] <context>` after the message, and
/// `resolve_exec_env` sets the granted one of two variables of an `exec`
/// command run through the dispatch path, with the command in its value.
pub async fn check_prepare_hooks(plugin: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        json!({
            "tools": {"exec": {"allow": ["*"]}},
            "agents": {"defaults": {"workspace": dir.path()}},
            "plugins": {"entries": {plugin: {
                "grants": {"execEnv": ["WORD_*"]},
                "config": {"turnContext": "mind the budget",
                    "execEnv": {"WORD_TOOL": "ran {command}", "OTHER": "o"}}}}}
        }),
        dir.path(),
    );
    let runner = runner_with(cfg, &[plugin]).await;
    let turn = clawhost_hooks::AgentRunEvent {
        session_id: None,
        agent_id: "main".into(),
        runtime: "acp".into(),
        model_ref: "m/x".into(),
        prompt: "hello".into(),
    };
    let prepared = runner.hooks().agent_turn_prepare(&turn).await;
    assert_eq!(prepared.prompt, "hello\n\n[acp] mind the budget");
    let command = r#"printf '%s|%s' "$WORD_TOOL" "${OTHER-unset}""#;
    let (out, _) = dispatch(&runner, "exec", json!({"command": command})).await;
    let result = json_of(&out);
    assert_eq!(result["stdout"], format!("ran {command}|unset"));
}

/// A directory of `n` copies of the `bench-noop` package (ids `noop-0` …),
/// and a config that loads them with the shared compiled cache.
pub fn noop_packages(n: usize) -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    let source = plugins_dir().join("bench-noop");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(source.join("openclaw.plugin.json")).unwrap(),
    )
    .unwrap();
    let mut entries = serde_json::Map::new();
    std::fs::create_dir_all(dir.path().join("plugins")).unwrap();
    for i in 0..n {
        let id = format!("noop-{i}");
        let package = dir.path().join("plugins").join(&id);
        std::fs::create_dir_all(&package).unwrap();
        let mut m = manifest.clone();
        m["id"] = json!(id);
        std::fs::write(package.join("openclaw.plugin.json"), m.to_string()).unwrap();
        std::fs::copy(source.join("plugin.wasm"), package.join("plugin.wasm")).unwrap();
        entries.insert(id.clone(), json!({"config": {"id": id}}));
    }
    let config = Config::from_json_str(
        &json!({"plugins": {"paths": ["plugins"], "entries": entries}}).to_string(),
        dir.path(),
    )
    .unwrap();
    let mut config = config;
    config.plugins.cache_dir = Some(cache_dir());
    config.plugins.cache_key_file = Some(cache_key_file());
    (dir, config)
}

/// A config of three providers on the fake server `url`, one per wire
/// format — `chat` (Chat Completions), `resp` (Responses) and `claude`
/// (Anthropic Messages) — each with `models`, no retries.
pub fn one_provider_per_wire_format(url: &str, models: Value) -> Config {
    let provider = |api: &str| {
        json!({"baseUrl": url, "api": api, "apiKey": "sk-test",
               "retry": {"maxAttempts": 1}, "models": models})
    };
    Config::from_json_str(
        &json!({"models": {"providers": {
            "chat": provider("openai-completions"),
            "resp": provider("openai-responses"),
            "claude": provider("anthropic-messages"),
        }}})
        .to_string(),
        Path::new("."),
    )
    .expect("valid provider config")
}
