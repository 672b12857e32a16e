//! The gateway against the web and floods: DNS rebinding and foreign
//! origins, forms, oversized and malformed requests, a client past its
//! turns, a connection that never finishes its headers. Every refusal is in
//! OpenAI's error shape.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::gateway::start;
use clawhost_tests::wire;
use serde_json::{json, Value};

/// The status and the `error.code` of a response.
async fn refusal(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.expect("an OpenAI-shaped JSON error");
    (status, body["error"]["code"].clone())
}

#[tokio::test]
async fn rebound_names_foreign_origins_and_forms_are_refused() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"gateway": {"allowedHosts": ["agents.internal"], "allowedOrigins": ["http://localhost:3000"]}}),
        "127.0.0.1:0",
    )
    .await;
    let http = reqwest::Client::new();
    let port = gw.addr.port();
    // DNS rebinding: the page's own name in `Host`, for the sessions API.
    let r = http
        .get(gw.url("/v1/sessions"))
        .header("host", format!("attacker.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(r).await, (403, json!("host_not_allowed")));
    // A listed name and the address itself are served.
    for host in [
        format!("agents.internal:{port}"),
        format!("127.0.0.1:{port}"),
    ] {
        let r = http
            .get(gw.url("/v1/sessions"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    // A cross-origin form posting to reload: refused for its origin, and
    // for being a form even from an allowed one.
    let r = http
        .post(gw.url("/admin/reload"))
        .header("origin", "http://attacker.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("a=1")
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(r).await, (403, json!("origin_not_allowed")));
    let r = http
        .post(gw.url("/admin/reload"))
        .header("origin", "http://localhost:3000")
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(r).await, (415, json!("unsupported_media_type")));
    // A page of the allowed origin may call the API.
    let r = http
        .get(gw.url("/v1/models"))
        .header("origin", "http://localhost:3000")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(fake.requests().is_empty());
    gw.shutdown().await;
}

#[tokio::test]
async fn malformed_oversized_and_unknown_requests_get_openai_shaped_errors() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"gateway": {"limits": {"maxMessages": 3, "maxRequestKb": 64}}}),
        "127.0.0.1:0",
    )
    .await;
    let http = reqwest::Client::new();
    let chat = gw.url("/v1/chat/completions");
    let user = json!({"role": "user", "content": "hi"});
    let many = json!({"model": "main", "messages": [user, user, user, user]});
    let r = http.post(&chat).json(&many).send().await.unwrap();
    assert_eq!(refusal(r).await, (400, json!("too_many_messages")));
    let input = json!({"model": "main", "input": [user, user, user, user]});
    let r = http
        .post(gw.url("/v1/responses"))
        .json(&input)
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(r).await, (400, json!("too_many_messages")));
    let r = http
        .post(&chat)
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "x".repeat(70_000)}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(r).await, (413, json!("request_too_large")));
    let r = http
        .post(&chat)
        .header("content-type", "application/json")
        .body("{\"model\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(r).await, (400, json!("invalid_json")));
    let r = http.post(&chat).body("{}").send().await.unwrap();
    assert_eq!(refusal(r).await, (415, json!("unsupported_media_type")));
    let r = http.get(gw.url("/v1/nothing-here")).send().await.unwrap();
    assert_eq!(refusal(r).await, (404, json!("not_found")));
    // A session header that is not text is refused, not a new session.
    let r = http
        .post(&chat)
        .header(
            "x-clawhost-session",
            reqwest::header::HeaderValue::from_bytes(b"\xff\xfe").unwrap(),
        )
        .json(&json!({"model": "main", "messages": [user]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(fake.requests().is_empty(), "nothing reached the model");
    let sessions: Value = http
        .get(gw.url("/v1/sessions"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        sessions["data"].as_array().map_or(0, Vec::len),
        0,
        "{sessions}"
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn a_client_runs_at_most_its_turns_at_once() {
    let fake = FakeProvider::start().await;
    // The first turn's model stalls after one piece of text.
    let mut events = wire::chat_text(&["thinking ", "never sent"], 1, 1);
    events.truncate(2);
    fake.push(Reply::sse_stalling(events, 2));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"gateway": {"limits": {"maxTurnsPerClient": 1}}}),
        "127.0.0.1:0",
    )
    .await;
    let http = reqwest::Client::new();
    let mut first = http
        .post(gw.url("/v1/runs"))
        .json(&json!({"message": "one"}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while !seen.contains("text_delta") {
        let chunk = first
            .chunk()
            .await
            .unwrap()
            .expect("the first turn streams");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let second = http
        .post(gw.url("/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "two"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(second).await, (429, json!("too_many_turns")));
    // The first client goes away: its slot is freed with its turn.
    drop(first);
    fake.push(Reply::sse(wire::chat_text(&["three"], 1, 1)));
    let deadline = Instant::now() + FakeProvider::PATIENCE;
    loop {
        let r = http
            .post(gw.url("/v1/chat/completions"))
            .json(&json!({"model": "main", "messages": [{"role": "user", "content": "three"}]}))
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            break;
        }
        assert_eq!(r.status(), 429);
        assert!(Instant::now() < deadline, "the slot was never freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gw.shutdown().await;
}

#[tokio::test]
async fn a_connection_that_never_finishes_its_headers_is_closed() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"gateway": {"limits": {"headerReadTimeoutMs": 300}}}),
        "127.0.0.1:0",
    )
    .await;
    let addr = gw.addr;
    let closed_after = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .unwrap();
        let started = Instant::now();
        let mut buf = Vec::new();
        // EOF (or a reset) once the gateway gives up on the headers.
        let _ = stream.read_to_end(&mut buf);
        started.elapsed()
    })
    .await
    .unwrap();
    assert!(closed_after < Duration::from_secs(5), "{closed_after:?}");
    // Others are served meanwhile and after.
    let ok = reqwest::get(gw.url("/healthz")).await.unwrap();
    assert_eq!(ok.status(), 200);
    gw.shutdown().await;
}
