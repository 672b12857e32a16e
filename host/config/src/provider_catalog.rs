//! Providers a config only needs to name: their wire API, endpoint, the
//! environment variable of their key and their well-known models. A
//! `models.providers.<id>` entry of a built-in id may give only what differs
//! (an `apiKey`, a `baseUrl`, more models); a model ref naming a built-in
//! provider works with no entry at all.

use serde_json::{json, Map, Value};

use crate::ProviderConfig;

/// Ids of the built-in providers.
pub const BUILTIN_PROVIDERS: [&str; 6] = [
    "openai",
    "anthropic",
    "openrouter",
    "ollama",
    "vllm",
    "lmstudio",
];

/// The environment as [`defaults`] reads it: a variable's value, if set.
type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A built-in provider's settings as config JSON. `OPENAI_BASE_URL` and
/// `ANTHROPIC_BASE_URL` move the official endpoints, as the providers' own
/// SDKs let them (a proxy, a gateway, a local stand-in).
fn defaults(id: &str, lookup: Lookup) -> Option<Value> {
    let base = |variable: &str, default: &str| {
        lookup(variable)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    let model = |id: &str, context: u64, max: u64| json!({"id": id, "contextWindow": context, "maxTokens": max, "input": ["text", "image"]});
    Some(match id {
        "openai" => json!({
            "api": "openai-responses",
            "baseUrl": base("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            "apiKeyEnv": "OPENAI_API_KEY",
            "models": [
                model("gpt-5", 400_000, 128_000),
                model("gpt-5-mini", 400_000, 128_000),
                model("gpt-4.1", 1_047_576, 32_768),
                model("gpt-4.1-mini", 1_047_576, 32_768),
            ],
        }),
        "anthropic" => json!({
            "api": "anthropic-messages",
            "baseUrl": base("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            "apiKeyEnv": "ANTHROPIC_API_KEY",
            "models": [
                model("claude-sonnet-4-5", 200_000, 64_000),
                model("claude-opus-4-1", 200_000, 32_000),
                model("claude-haiku-4-5", 200_000, 64_000),
            ],
        }),
        "openrouter" => json!({
            "api": "openai-completions",
            "baseUrl": "https://openrouter.ai/api/v1",
            "apiKeyEnv": "OPENROUTER_API_KEY",
        }),
        // Local OpenAI-compatible servers at their default ports, no key.
        "ollama" => json!({"api": "openai-completions", "baseUrl": "http://127.0.0.1:11434/v1"}),
        "vllm" => json!({"api": "openai-completions", "baseUrl": "http://127.0.0.1:8000/v1"}),
        "lmstudio" => json!({"api": "openai-completions", "baseUrl": "http://127.0.0.1:1234/v1"}),
        _ => return None,
    })
}

/// The built-in provider `id`, if there is one, with its endpoint as the
/// process environment sets it.
pub fn builtin_provider(id: &str) -> Option<ProviderConfig> {
    serde_json::from_value(defaults(id, &|name| std::env::var(name).ok())?).ok()
}

/// Fill each `models.providers.<built-in id>` entry of a config that names
/// no `api` with the built-in settings it leaves out (its own win; the key
/// variable is not added when it gives `apiKey`; its models come first).
pub(crate) fn complete(config: &mut Value, lookup: Lookup) {
    let Some(providers) = config
        .pointer_mut("/models/providers")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (id, entry) in providers.iter_mut() {
        let (Some(entry), Some(Value::Object(builtin))) =
            (entry.as_object_mut(), defaults(id, lookup))
        else {
            continue;
        };
        if entry.contains_key("api") {
            continue; // a provider of its own under a built-in's name
        }
        merge(entry, builtin);
    }
}

fn merge(entry: &mut Map<String, Value>, builtin: Map<String, Value>) {
    let has_key = entry.contains_key("apiKey") || entry.contains_key("apiKeyEnv");
    for (key, value) in builtin {
        match (key.as_str(), entry.get_mut(&key)) {
            ("apiKeyEnv", None) if has_key => {}
            ("models", Some(Value::Array(own))) => {
                let Value::Array(more) = value else { continue };
                for m in more {
                    if !own.iter().any(|o| o.get("id") == m.get("id")) {
                        own.push(m);
                    }
                }
            }
            (_, None) => {
                entry.insert(key, value);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_a_partial_entry_is_completed() {
        for id in BUILTIN_PROVIDERS {
            assert!(builtin_provider(id).is_some(), "{id}");
        }
        let mut config = json!({"models": {"providers": {
            "openai": {"apiKey": "sk", "models": [{"id": "my-tune"}]},
            "anthropic": {},
            "openrouter": {"api": "openai-completions", "baseUrl": "https://proxy/v1"},
            "mine": {"api": "scripted"}
        }}});
        complete(&mut config, &|_| None);
        let p = &config["models"]["providers"];
        assert_eq!(p["openai"]["api"], "openai-responses");
        assert_eq!(p["openai"]["apiKey"], "sk");
        assert!(p["openai"].get("apiKeyEnv").is_none());
        assert_eq!(p["openai"]["models"][0]["id"], "my-tune");
        assert_eq!(p["openai"]["models"].as_array().unwrap().len(), 5);
        assert_eq!(p["anthropic"]["apiKeyEnv"], "ANTHROPIC_API_KEY");
        assert_eq!(
            p["openrouter"],
            json!({"api": "openai-completions", "baseUrl": "https://proxy/v1"})
        );
        assert_eq!(p["mine"], json!({"api": "scripted"}));
        assert_eq!(p["anthropic"]["baseUrl"], "https://api.anthropic.com");
        // The official SDKs' endpoint variables move the endpoint.
        let mut config = json!({"models": {"providers": {"openai": {}}}});
        let lookup =
            |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:9/v1".into());
        complete(&mut config, &lookup);
        assert_eq!(
            config["models"]["providers"]["openai"]["baseUrl"],
            "http://127.0.0.1:9/v1"
        );
    }
}
