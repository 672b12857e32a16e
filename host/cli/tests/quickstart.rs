//! The README's quick start, run as it stands by `sh -e` from a fresh home
//! directory, with the binary under test standing in for `cargo install`
//! and `OPENAI_BASE_URL` pointing the built-in `openai` provider at a local
//! server that answers in the Responses API's streaming format.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

/// The quick start's commands: the fenced block after `<!-- quickstart -->`.
fn quick_start() -> String {
    let readme = std::fs::read_to_string(clawhost::build::repo_root().join("README.md")).unwrap();
    let after = readme
        .split_once("<!-- quickstart -->\n```sh\n")
        .expect("README.md has a quick start block")
        .1;
    after.split_once("```").unwrap().0.to_string()
}

fn event(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap())
}

/// A Responses stream answering `text`.
fn text_reply(text: &str) -> String {
    [
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": text}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
            "output": [{"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
            "usage": {"input_tokens": 12, "output_tokens": 5, "total_tokens": 17}}}),
    ]
    .into_iter()
    .map(event)
    .collect()
}

/// A Responses stream calling `name` with `args`.
fn call_reply(name: &str, args: &str) -> String {
    [
        json!({"type": "response.created", "response": {"id": "resp_2", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": name}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": args}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": args}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": args, "call_id": "call_1", "name": name}}),
        json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "usage": {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}}}),
    ]
    .into_iter()
    .map(event)
    .collect()
}

/// One request as the server saw it: (request line, authorization, body).
type Seen = Arc<Mutex<Vec<(String, String, Value)>>>;

/// Serve `replies` in order, one per connection, recording each request.
fn serve(replies: Vec<String>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut first, mut auth, mut length) = (String::new(), String::new(), 0);
            reader.read_line(&mut first).unwrap();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "authorization" => auth = value.trim().to_string(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
            record
                .lock()
                .unwrap()
                .push((first.trim().to_string(), auth, body));
            let reply = match replies.next() {
                Some(sse) => format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{sse}"
                ),
                None => "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            };
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, seen)
}

#[test]
fn the_readme_quick_start_works_from_an_installed_binary() {
    let script: String = quick_start()
        .lines()
        .filter(|l| !l.starts_with("cargo install"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(script.contains("clawhost run"), "{script}");
    let (url, seen) = serve(vec![
        text_reply("Hello there, nice to meet."),
        call_reply("hello_echo", "{\"text\":\"hi there\"}"),
        text_reply("It said hi there."),
    ]);
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_clawhost"), bin.join("clawhost")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-e", "-x", "-c", &script])
        .current_dir(home.path())
        .env("PATH", path)
        .env("HOME", home.path())
        .env("OPENAI_BASE_URL", &url)
        .env("NO_COLOR", "1")
        // The checkout out of reach: the SDK comes from the binary alone.
        .env("CLAWHOST_SOURCE_DIR", home.path().join("no-checkout"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAWHOST_CONFIG")
        .env_remove("CLAWHOST_PLUGINS_DIR")
        .env_remove("RUST_LOG")
        .env_remove("CLAWHOST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{all}");
    assert!(stdout.contains("Hello there, nice to meet."), "{all}");
    assert!(
        stdout.contains("hello_echo (call_1) ✓ \"hi there\""),
        "{all}"
    );
    assert!(stdout.contains("It said hi there."), "{all}");
    assert!(stdout.contains("✓ hello 0.1.0 loads"), "{all}");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    for (line, auth, body) in seen.iter() {
        assert!(line.starts_with("POST /v1/responses "), "{line}");
        assert_eq!(auth, "Bearer sk-...");
        assert_eq!(body["model"], "gpt-4.1");
    }
    let offered = seen[1].2["tools"].to_string();
    assert!(offered.contains("hello_echo"), "{offered}");
    let answered = seen[2].2["input"].to_string();
    assert!(
        answered.contains("function_call_output") && answered.contains("hi there"),
        "{answered}"
    );
    let config = home.path().join(".config/clawhost/clawhost.json5");
    let text = std::fs::read_to_string(config).unwrap();
    assert!(
        text.contains("sha256") && text.contains("openai/gpt-4.1"),
        "{text}"
    );
    assert!(home
        .path()
        .join(".config/clawhost/plugins/hello/plugin.wasm")
        .is_file());
    // The scaffold names the SDK the binary unpacked, by path.
    let package = std::fs::read_to_string(home.path().join("hello/package.json")).unwrap();
    let sdk = home.path().join(".local/share/clawhost/sdk");
    assert!(
        package.contains(&format!("file:{}/", sdk.display())),
        "{package}"
    );
}
