//! OTLP traces from the binary: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, a
//! `clawhost run` that calls a plugin tool sends its turn, model-call,
//! tool-call and plugin-call spans to a loopback OTLP/HTTP receiver; unset,
//! nothing is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use common::{clawhost, outcome, plugins, write_config};
use serde_json::json;

/// What the receiver got: each request's path and body.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A loopback OTLP/HTTP receiver: its URL and what it receives.
fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let mut length = 0;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = header.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            record.lock().unwrap().push((path, body));
            let _ = reader.get_mut().write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (url, seen)
}

#[test]
fn a_run_exports_its_spans_over_otlp_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("script.json"),
        json!([{"toolCalls": [{"name": "word_count", "arguments": {"text": "{{user}}"}}]},
               {"answer": "counted"}])
        .to_string(),
    )
    .unwrap();
    let config = write_config(
        dir.path(),
        json!({
            "models": {"providers": {"s": {"api": "scripted", "script": "script.json", "models": [{"id": "m"}]}}},
            "agents": {"defaults": {"model": "s/m"}},
            "sessions": {"dir": dir.path().join("sessions")},
            "plugins": {"paths": [plugins()], "allow": ["text-tools"]},
        }),
    );
    let (url, seen) = receiver();
    let (ok, stdout, stderr) = outcome(
        clawhost(dir.path())
            .args(["-c"])
            .arg(&config)
            .args(["run", "one two three"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
    );
    assert!(ok && stdout.contains("counted"), "{stdout}\n{stderr}");
    let sent = seen.lock().unwrap().clone();
    let traces: Vec<&Vec<u8>> = sent
        .iter()
        .filter(|(path, _)| path == "/v1/traces")
        .map(|(_, body)| body)
        .collect();
    assert!(
        !traces.is_empty(),
        "no trace export reached {url}: {sent:?}"
    );
    let all: Vec<u8> = traces.into_iter().flatten().copied().collect();
    let has = |needle: &str| all.windows(needle.len()).any(|w| w == needle.as_bytes());
    for name in [
        "clawhost",
        "turn",
        "model_call",
        "tool_call",
        "plugin_call",
        "word_count",
        "text-tools",
    ] {
        assert!(has(name), "`{name}` is not in the exported spans");
    }

    // Without the variable nothing is sent.
    let before = seen.lock().unwrap().len();
    let (ok, _, stderr) = outcome(
        clawhost(dir.path())
            .args(["-c"])
            .arg(&config)
            .args(["run", "again"]),
    );
    assert!(ok, "{stderr}");
    assert_eq!(seen.lock().unwrap().len(), before);
}
