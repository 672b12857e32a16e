//! `GET /metrics` read by the Prometheus project's own text parser (the
//! official Python client's `text_string_to_metric_families`): a turn that
//! calls a plugin tool shows in the turn, token, tool-call and plugin
//! counters.

use std::io::Write;
use std::process::Stdio;

use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::gateway::start;
use clawhost_tests::{cache_dir, cache_key_file, plugins_dir, wire};
use serde_json::{json, Value};

/// Parse the exposition with `prometheus_client.parser`; every sample as
/// `{"name", "labels", "value"}`.
fn parse(text: &str) -> Vec<Value> {
    const PARSER: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"name": s.name, "labels": s.labels, "value": s.value, "type": family.type})
print(json.dumps(out))
"#;
    let mut child = clawhost_tests::python::command()
        .args(["-c", PARSER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the Prometheus parser refused the exposition: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sample(samples: &[Value], name: &str, labels: Value) -> f64 {
    samples
        .iter()
        .find(|s| {
            s["name"] == name
                && labels
                    .as_object()
                    .unwrap()
                    .iter()
                    .all(|(k, v)| &s["labels"][k] == v)
        })
        .unwrap_or_else(|| panic!("no sample {name} {labels} in {samples:#?}"))["value"]
        .as_f64()
        .unwrap()
}

#[tokio::test]
async fn metrics_count_turns_tokens_tool_calls_and_plugin_calls() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_tool_call(
        "c1",
        "word_count",
        &[r#"{"text": "a b c"}"#],
    )));
    fake.push(Reply::sse(wire::chat_text(&["three words"], 30, 4)));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"plugins": {"paths": [plugins_dir()], "allow": ["text-tools"],
            "cacheDir": cache_dir(), "cacheKeyFile": cache_key_file()}}),
        "127.0.0.1:0",
    )
    .await;
    let http = reqwest::Client::new();
    let reply: Value = http
        .post(gw.url("/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "count a b c"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        reply["choices"][0]["message"]["content"], "three words",
        "{reply}"
    );
    let scrape = http.get(gw.url("/metrics")).send().await.unwrap();
    assert_eq!(scrape.status(), 200);
    let kind = scrape.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let samples = parse(&scrape.text().await.unwrap());
    let main = json!({"agent": "main"});
    assert_eq!(
        sample(
            &samples,
            "clawhost_turns_total",
            json!({"agent": "main", "outcome": "ok"})
        ),
        1.0
    );
    assert_eq!(
        sample(&samples, "clawhost_tool_calls_total", main.clone()),
        1.0
    );
    assert_eq!(
        sample(
            &samples,
            "clawhost_tokens_total",
            json!({"agent": "main", "kind": "input"})
        ),
        50.0
    );
    assert_eq!(
        sample(
            &samples,
            "clawhost_tokens_total",
            json!({"agent": "main", "kind": "output"})
        ),
        13.0
    );
    assert_eq!(
        sample(&samples, "clawhost_model_reply_seconds_count", main.clone()),
        2.0
    );
    assert_eq!(sample(&samples, "clawhost_turn_seconds_count", main), 1.0);
    let text_tools = json!({"plugin": "text-tools"});
    assert_eq!(
        sample(&samples, "clawhost_plugin_calls_total", text_tools.clone()),
        1.0
    );
    assert_eq!(
        sample(
            &samples,
            "clawhost_plugin_call_seconds_count",
            text_tools.clone()
        ),
        1.0
    );
    assert_eq!(
        sample(
            &samples,
            "clawhost_plugin_call_seconds_bucket",
            json!({"plugin": "text-tools", "le": "+Inf"})
        ),
        1.0
    );
    assert_eq!(
        sample(
            &samples,
            "clawhost_plugin_failures_total",
            json!({"plugin": "text-tools", "kind": "timeout"})
        ),
        0.0
    );
    assert_eq!(
        sample(&samples, "clawhost_plugin_quarantined", text_tools.clone()),
        0.0
    );
    assert!(
        sample(
            &samples,
            "clawhost_plugin_memory_high_water_bytes",
            text_tools
        ) > 0.0
    );
    gw.shutdown().await;
}
