//! Resource packages feed the agent: extensions load through the allowlist,
//! skills reach the system prompt the model sees.

use clawhost_agent_core::RunContext;
use clawhost_llm::ModelRuntimes;
use clawhost_runner::EmbeddedRunner;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{cache_dir, copy_package, plugins_dir, wire};
use serde_json::json;

#[tokio::test]
async fn a_resource_package_brings_extensions_and_skills() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["ok"], 1, 1)));
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    copy_package(&plugins_dir().join("text-tools"), &pkg.join("ext/text"));
    copy_package(
        &plugins_dir().join("redact-results"),
        &pkg.join("ext/redact"),
    );
    std::fs::create_dir_all(pkg.join("skills")).unwrap();
    std::fs::write(
        pkg.join("skills/counting.md"),
        "Use word_count for counting words.",
    )
    .unwrap();
    std::fs::write(
        pkg.join("package.json"),
        json!({"name": "pkg", "openclaw": {"extensions": ["ext/*"]}}).to_string(),
    )
    .unwrap();

    let mut config = clawhost_config::Config::from_json_str(
        &json!({
            "plugins": {"allow": ["text-tools"]},
            "resources": {"packages": ["pkg"]},
            "models": {"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url()}}},
            "agents": {"defaults": {"model": "fake/m", "systemPrompt": "You are terse."}}
        })
        .to_string(),
        dir.path(),
    )
    .unwrap();
    config.plugins.cache_dir = Some(cache_dir());
    config.plugins.cache_key_file = Some(clawhost_tests::cache_key_file());
    let runtimes = ModelRuntimes::new();
    runtimes.rebuild(&config).unwrap();
    let (runner, reports) = EmbeddedRunner::start(config).await.unwrap();
    let loaded: Vec<_> = runner
        .plugins()
        .plugins()
        .iter()
        .map(|p| p.id().to_string())
        .collect();
    assert_eq!(loaded, ["text-tools"]);
    let refused = reports
        .iter()
        .find(|r| r.id.as_deref() == Some("redact-results"))
        .unwrap();
    assert!(refused
        .result
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("plugins.allow"));

    let generation = runtimes.current("main").unwrap();
    runner
        .run_on_generation(generation, &RunContext::new("main", "fake/m"), &[], "hi")
        .await
        .unwrap();
    let body = &fake.requests()[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("You are terse.")
            && system.contains("## counting\nUse word_count for counting words."),
        "{system}"
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"word_count"));
}

#[tokio::test]
async fn an_escaping_resource_glob_stops_start_up_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(
        dir.path().join("pkg/package.json"),
        r#"{"openclaw": {"prompts": ["../*.md"]}}"#,
    )
    .unwrap();
    let config = clawhost_config::Config::from_json_str(
        r#"{"resources": {"packages": ["pkg"]}}"#,
        dir.path(),
    )
    .unwrap();
    let err = EmbeddedRunner::start(config).await.err().unwrap();
    assert!(
        format!("{err:#}").contains("escapes the package root"),
        "{err:#}"
    );
}

#[tokio::test]
async fn every_extension_package_loads() {
    // Extensions found through resource packages all load: when the engine
    // had an instance pool sized from the packages it counted, the 17th
    // extension of a host with no other package found no slot.
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    let source = plugins_dir().join("bench-noop");
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(source.join("openclaw.plugin.json")).unwrap(),
    )
    .unwrap();
    let mut entries = serde_json::Map::new();
    for i in 0..17 {
        let id = format!("ext-noop-{i}");
        let to = pkg.join("ext").join(&id);
        copy_package(&source, &to);
        let mut m = manifest.clone();
        m["id"] = json!(id);
        std::fs::write(to.join("openclaw.plugin.json"), m.to_string()).unwrap();
        entries.insert(id.clone(), json!({"config": {"id": id}}));
    }
    std::fs::write(
        pkg.join("package.json"),
        json!({"name": "pkg", "openclaw": {"extensions": ["ext/*"]}}).to_string(),
    )
    .unwrap();
    let mut config = clawhost_config::Config::from_json_str(
        &json!({"plugins": {"entries": entries}, "resources": {"packages": ["pkg"]}}).to_string(),
        dir.path(),
    )
    .unwrap();
    // A cache of its own: nothing remembered, so each load instantiates
    // its plugin to call `register`.
    config.plugins.cache_dir = Some(dir.path().join("cache"));
    config.plugins.cache_key_file = Some(dir.path().join("cache.key"));
    let (runner, reports) = EmbeddedRunner::start(config).await.unwrap();
    let failed: Vec<_> = reports.iter().filter(|r| r.result.is_err()).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(runner.plugins().plugins().len(), 17);
}
