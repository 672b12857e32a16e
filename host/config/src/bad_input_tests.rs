//! Bad configuration: every error names the file and the key, nothing panics.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::{Config, ConfigError};

fn write(dir: &Path, config: &Value) -> std::path::PathBuf {
    let path = dir.join("clawhost.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

fn load_err(config: Value) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &config);
    let err = Config::load(&path).expect_err("config must be refused");
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()),
        "the error names the file: {text}"
    );
    let key = match err {
        ConfigError::Parse { source, .. } => source.key,
        ConfigError::Invalid { key, .. } => key,
        ConfigError::Read { .. } => String::new(),
    };
    (key, text)
}

#[test]
fn unknown_keys_and_wrong_types_are_refused_at_their_key() {
    for (config, key, says) in [
        (
            json!({"plugins": {"alow": []}}),
            "plugins.alow",
            "unknown field `alow`",
        ),
        (
            json!({"plugins": {"limits": {"memoryMb": "lots"}}}),
            "plugins.limits.memoryMb",
            "invalid type: string",
        ),
        (
            json!({"plugins": {"entries": {"a": {"grants": {"filesystem": [{"guestPath": "/d", "hostPath": "d", "access": "everything"}]}}}}}),
            "plugins.entries.a.grants.filesystem[0].access",
            "unknown variant `everything`",
        ),
        (
            json!({"plugins": {"entries": {"a": {"failPolicy": "maybe"}}}}),
            "plugins.entries.a.failPolicy",
            "unknown variant `maybe`",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {"before_tool_call": {"timeout": 5}}}}}}),
            "plugins.entries.a.hooks.before_tool_call.timeout",
            "unknown field `timeout`",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {"allowConversationAccess": "yes"}}}}}),
            "plugins.entries.a.hooks.allowConversationAccess",
            "invalid type: string",
        ),
        (
            json!({"models": {"providers": {"x": {"api": "carrier-pigeon"}}}}),
            "models.providers.x.api",
            "unknown variant",
        ),
        (
            json!({"agents": {"defaults": {"maxIterations": -1}}}),
            "agents.defaults.maxIterations",
            "invalid value",
        ),
        (
            json!({"tools": {"deny": "exec"}}),
            "tools.deny",
            "invalid type",
        ),
        (
            json!({"plugins": {"slots": {"contextEngin": "x"}}}),
            "plugins.slots.contextEngin",
            "unknown field `contextEngin`",
        ),
        (
            json!({"approvals": {"nonInteractive": "ask"}}),
            "approvals.nonInteractive",
            "unknown variant `ask`",
        ),
        (json!([1, 2]), "", "must be a JSON object"),
        (json!("text"), "", "invalid type: string"),
    ] {
        let (found, text) = load_err(config.clone());
        assert_eq!(found, key, "{config}: {text}");
        assert!(text.contains(says), "{config}: {text}");
        if !key.is_empty() {
            assert!(text.contains(&format!("`{key}`")), "{text}");
        }
    }
}

#[test]
fn unusable_values_are_refused_at_their_key() {
    for (config, key, says) in [
        (
            json!({"plugins": {"paths": ["missing-dir"]}}),
            "plugins.paths[0]",
            "does not exist",
        ),
        (
            json!({"agents": {"list": [{"id": "a"}, {"id": "b", "embeddedHarness": {"fallback": "maybe"}}]}}),
            "agents.list[1].embeddedHarness.fallback",
            "unknown fallback `maybe`",
        ),
        (
            json!({"models": {"providers": {"p": {"api": "scripted",
                "models": [{"id": "m", "agentRuntime": {"id": "x", "fallback": "sometimes"}}]}}}}),
            "models.providers.p.models[0].agentRuntime.fallback",
            "unknown fallback",
        ),
        (
            json!({"models": {"providers": {"claude": {"api": "anthropic-messages", "baseUrl": "https://api.anthropic.com",
                "models": [{"id": "m", "maxTokens": 4096, "params": {"thinking": {"type": "enabled", "budget_tokens": 8000}}}]}}}}),
            "models.providers.claude.models[0].params.thinking.budget_tokens",
            "not below the reply's max_tokens 4096",
        ),
        (
            json!({"models": {"providers": {"claude": {"api": "anthropic-messages", "baseUrl": "https://api.anthropic.com",
                "params": {"thinking": {"type": "enabled", "budget_tokens": 100}}, "models": [{"id": "m"}]}}}}),
            "models.providers.claude.models[0].params.thinking.budget_tokens",
            "at least 1024",
        ),
        (
            json!({"resources": {"packages": ["nope"]}}),
            "resources.packages[0]",
            "does not exist",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {"before_tool": {}}}}}}),
            "plugins.entries.a.hooks.before_tool",
            "unknown hook",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {"timeouts": {"agent_stop": 5}}}}}}),
            "plugins.entries.a.hooks.timeouts.agent_stop",
            "unknown hook",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {"timeouts": {"agent_end": 0}}}}}}),
            "plugins.entries.a.hooks.timeouts.agent_end",
            "must be from 1 to 600000",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {"timeoutMs": 600001}}}}}),
            "plugins.entries.a.hooks.timeoutMs",
            "must be from 1 to 600000",
        ),
        (
            json!({"plugins": {"entries": {"a": {"hooks": {
                "timeouts": {"llm_input": 100},
                "llm_input": {"timeoutMs": 200}
            }}}}}),
            "plugins.entries.a.hooks.timeouts.llm_input",
            "keep one",
        ),
        (
            json!({"plugins": {"slots": {"contextEngine": "ghost"}}}),
            "plugins.slots.contextEngine",
            "neither `legacy` nor a plugin in plugins.entries",
        ),
        (
            json!({"plugins": {"slots": {"memory": "memory-core"}}}),
            "plugins.slots.memory",
            "the only value is `none`",
        ),
        (
            json!({"plugins": {"entries": {"a": {"memoryMb": 0}}}}),
            "plugins.entries.a.memoryMb",
            "must be from 1 to 4096",
        ),
        (
            json!({"approvals": {"timeoutMs": 600001}}),
            "approvals.timeoutMs",
            "must be from 1 to 600000",
        ),
        (
            json!({"plugins": {"entries": {"a": {"sha256": "abc"}}}}),
            "plugins.entries.a.sha256",
            "64 hex digits",
        ),
        (
            json!({"plugins": {"limits": {"callTimeoutMs": 0}}}),
            "plugins.limits.callTimeoutMs",
            "at least 1",
        ),
        (
            json!({"plugins": {"entries": {"a": {"grants": {"filesystem": [{"guestPath": "d", "hostPath": "."}]}}}}}),
            "plugins.entries.a.grants.filesystem[0].guestPath",
            "absolute",
        ),
        (
            json!({"plugins": {"entries": {"a": {"grants": {"filesystem": [{"guestPath": "/d", "hostPath": "gone"}]}}}}}),
            "plugins.entries.a.grants.filesystem[0].hostPath",
            "does not exist",
        ),
    ] {
        let (found, text) = load_err(config.clone());
        assert_eq!(found, key, "{config}: {text}");
        assert!(text.contains(says), "{config}: {text}");
    }
}

#[test]
fn a_missing_file_and_broken_json_are_clear() {
    let err = Config::load(Path::new("/nonexistent/clawhost.json")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot read config file /nonexistent/clawhost.json"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clawhost.json");
    std::fs::write(&path, "{\"plugins\": {\n  \"allow\": [\"a\" \"b\"]}}").unwrap();
    let err = Config::load(&path).unwrap_err().to_string();
    assert!(err.contains("2:"), "the error gives the line: {err}");
}

#[test]
fn json5_and_environment_variables_are_accepted() {
    let text = r#"{
        // comments, unquoted keys, single quotes and trailing commas
        plugins: { allow: ['a', 'b',], },
        models: { providers: { o: { api: "openai-completions", baseUrl: "https://x/v1", apiKey: "${FAKE_KEY}" } } },
    }"#;
    let env = |name: &str| (name == "FAKE_KEY").then(|| "sk-test".to_string());
    let config = Config::from_text_with_env(text, Path::new("."), &env).unwrap();
    assert_eq!(config.plugins.allow, Some(vec!["a".into(), "b".into()]));
    assert_eq!(
        config.models.providers["o"].api_key.as_deref(),
        Some("sk-test")
    );
    let err = Config::from_text_with_env(text, Path::new("."), &|_| None).unwrap_err();
    assert_eq!(err.key, "models.providers.o.apiKey");
    assert!(err.to_string().contains("`FAKE_KEY` is not set"), "{err}");
}

/// JSON built from the config's own key names, so the fuzzer reaches deep.
fn config_like() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "plugins",
        "paths",
        "allow",
        "deny",
        "limits",
        "memoryMb",
        "callTimeoutMs",
        "entries",
        "a",
        "grants",
        "filesystem",
        "guestPath",
        "hostPath",
        "access",
        "env",
        "hooks",
        "before_tool_call",
        "failPolicy",
        "timeoutMs",
        "models",
        "providers",
        "api",
        "baseUrl",
        "agents",
        "defaults",
        "model",
        "tools",
        "resources",
        "packages",
        "sessions",
        "dir",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z/._-]{0,8}".prop_map(Value::from),
        Just(json!("block")),
        Just(json!("read-only")),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..5).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        let _ = Config::from_json_str(&text, Path::new("."));
    }

    #[test]
    fn config_shaped_json_is_parsed_or_refused_at_a_key(value in config_like()) {
        match Config::from_json_str(&value.to_string(), Path::new("/nonexistent")) {
            Ok(config) => {
                let _ = config.check();
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
