//! `clawhost gateway` end to end over loopback: the official OpenAI Python
//! client (streaming and not) against the gateway, whose agent talks to a
//! fake provider speaking OpenAI's wire format; sessions stored and
//! continued; tokens; a client that goes away aborts its turn and nothing
//! already done is lost; many sessions at once; reload.

use std::sync::Arc;

use clawhost_gateway::Gateway;
use clawhost_runner::AgentHost;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::gateway::{config_json, start};
use clawhost_tests::wire;
use serde_json::{json, Value};

/// Send a request and read its JSON body, or its status.
trait JsonOf {
    async fn json_of(self) -> Value;
    async fn status_of(self) -> u16;
}

impl JsonOf for reqwest::RequestBuilder {
    async fn json_of(self) -> Value {
        self.send().await.unwrap().json().await.unwrap()
    }

    async fn status_of(self) -> u16 {
        self.send().await.unwrap().status().as_u16()
    }
}

fn stored_messages(gw: &Gateway, session: &str) -> Vec<Value> {
    let t = gw
        .host()
        .store()
        .open_read_only("main", session)
        .expect("the session is stored");
    t.entries()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

/// The official OpenAI Python client, from PyPI (`.ci/run` installs it).
const PY_CLIENT: &str = r#"
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1] + "/v1", api_key="t0ken-for-tests")
raw = client.chat.completions.with_raw_response.create(
    model="main", messages=[{"role": "user", "content": "first question"}])
first = raw.parse()
session = raw.headers["x-clawhost-session"]
pieces = []
usage = None
for chunk in client.chat.completions.create(
        model="agent/main", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "second question"}],
        extra_headers={"X-Clawhost-Session": session}):
    if chunk.choices and chunk.choices[0].delta.content:
        pieces.append(chunk.choices[0].delta.content)
    if chunk.usage:
        usage = chunk.usage.total_tokens
print(json.dumps({"first": first.choices[0].message.content,
                  "first_usage": first.usage.total_tokens,
                  "session": session, "streamed": pieces, "usage": usage}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_client_talks_to_the_gateway_and_the_session_is_stored() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["first ", "answer"], 10, 2)));
    fake.push(Reply::sse(wire::chat_text(&["second ", "answer"], 20, 3)));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"gateway": {"auth": {"token": "t0ken-for-tests"}}}),
        "127.0.0.1:0",
    )
    .await;
    let got = python(PY_CLIENT, &gw.url("")).await;
    assert_eq!(got["first"], "first answer", "{got}");
    assert_eq!(got["first_usage"], 12, "{got}");
    assert_eq!(got["streamed"], json!(["second ", "answer"]), "{got}");
    assert_eq!(got["usage"], 23, "{got}");
    // The second request continued the first one's session: the model saw
    // the whole conversation, and the transcript holds all four messages.
    let requests = fake.requests();
    let sent = &requests[1].body["messages"];
    let texts: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        texts,
        ["first question", "first answer", "second question"],
        "{sent}"
    );
    let session = got["session"].as_str().unwrap();
    let stored = serde_json::to_string(&stored_messages(&gw.gateway, session)).unwrap();
    for text in [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ] {
        assert!(stored.contains(text), "`{text}` not stored: {stored}");
    }
    gw.shutdown().await;
}

/// The Responses API through the same client: `previous_response_id`
/// continues the session; the stream helper assembles the streamed text.
const PY_RESPONSES: &str = r#"
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1] + "/v1", api_key="unused")
first = client.responses.create(model="main", input="first question")
pieces = []
with client.responses.stream(model="main", input="second question",
                             previous_response_id=first.id) as stream:
    for event in stream:
        if event.type == "response.output_text.delta":
            pieces.append(event.delta)
    final = stream.get_final_response()
print(json.dumps({"first": first.output_text, "streamed": pieces,
                  "final": final.output_text, "usage": final.usage.total_tokens}))
"#;

async fn python(script: &str, url: &str) -> Value {
    let out = tokio::process::Command::from(clawhost_tests::python::command())
        .arg("-c")
        .arg(script)
        .arg(url)
        .output()
        .await
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the OpenAI client failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_responses_api_streams_and_previous_response_id_continues_the_session() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["first ", "answer"], 10, 2)));
    fake.push(Reply::sse(wire::chat_text(&["second ", "answer"], 20, 3)));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let got = python(PY_RESPONSES, &gw.url("")).await;
    assert_eq!(got["first"], "first answer", "{got}");
    assert_eq!(got["streamed"], json!(["second ", "answer"]), "{got}");
    assert_eq!(got["final"], "second answer", "{got}");
    assert_eq!(got["usage"], 23, "{got}");
    let requests = fake.requests();
    let sent = requests[1].body["messages"].to_string();
    assert!(
        sent.contains("first question") && sent.contains("first answer"),
        "the second response continued the first one's session: {sent}"
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn a_token_is_asked_for_and_compared_and_open_binds_need_one() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"gateway": {"auth": {"token": "right"}}}),
        "127.0.0.1:0",
    )
    .await;
    let http = reqwest::Client::new();
    let models = |auth: Option<&'static str>| {
        let mut r = http.get(gw.url("/v1/models"));
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.send()
    };
    assert_eq!(models(None).await.unwrap().status(), 401);
    assert_eq!(models(Some("Bearer wrong")).await.unwrap().status(), 401);
    assert_eq!(models(Some("right")).await.unwrap().status(), 401);
    let ok = models(Some("Bearer right")).await.unwrap();
    assert_eq!(ok.status(), 200);
    let body: Value = ok.json().await.unwrap();
    assert_eq!(body["data"][0]["id"], "main", "{body}");
    // Liveness needs no token.
    assert_eq!(http.get(gw.url("/healthz")).status_of().await, 200);
    gw.shutdown().await;

    // Without a token, only loopback.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("clawhost.json");
    std::fs::write(
        &config,
        config_json(&fake, dir.path(), json!({})).to_string(),
    )
    .unwrap();
    let (host, _) = AgentHost::start(clawhost_config::Config::load(&config).unwrap(), None)
        .await
        .unwrap();
    let open = Gateway::new(Arc::new(host)).unwrap();
    let err = open.listen(Some("0.0.0.0:0")).await.unwrap_err();
    assert!(err.to_string().contains("gateway.auth.token"), "{err}");
}

#[tokio::test]
async fn bad_requests_get_openai_shaped_errors() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let http = reqwest::Client::new();
    for (body, status, says) in [
        (
            json!({"model": "nobody", "messages": [{"role": "user", "content": "hi"}]}),
            404,
            "no agent `nobody`",
        ),
        (
            json!({"model": "main", "messages": [{"role": "assistant", "content": "hi"}]}),
            400,
            "last message must be the user's",
        ),
        (
            json!({"model": "main", "tools": [], "messages": [{"role": "user", "content": "hi"}]}),
            400,
            "`tools` are not accepted",
        ),
        (
            json!({"model": "main", "messages": [{"role": "user", "content": "hi"}],
                   "session": "no-such-session"}),
            404,
            "no session `no-such-session`",
        ),
    ] {
        let r = http
            .post(gw.url("/v1/chat/completions"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), status, "{body}");
        let err: Value = r.json().await.unwrap();
        let message = err["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{err}");
    }
    assert!(
        fake.requests().is_empty(),
        "no bad request reached the model"
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn a_client_that_goes_away_aborts_its_turn_and_what_streamed_is_stored() {
    let fake = FakeProvider::start().await;
    // One piece of text, then the provider stalls.
    let mut events = wire::chat_text(&["partial ", "never sent"], 1, 1);
    events.truncate(2);
    fake.push(Reply::sse_stalling(events, 2));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let http = reqwest::Client::new();
    let mut response = http
        .post(gw.url("/v1/runs"))
        .json(&json!({"message": "tell me"}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    read_until(&mut response, &mut seen, "event: text_delta").await;
    let start = seen.find("\"session_id\":\"").unwrap() + 14;
    let session = seen[start..start + seen[start..].find('"').unwrap()].to_string();
    drop(response);
    // The turn is aborted and stored: the user's message, the text that
    // had streamed, and the abort marker.
    let stored = tokio::time::timeout(FakeProvider::PATIENCE, async {
        loop {
            let stored = serde_json::to_string(&stored_messages(&gw.gateway, &session)).unwrap();
            if stored.contains("turn_aborted") {
                return stored;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the turn is aborted once the client is gone");
    assert!(stored.contains("tell me"), "{stored}");
    assert!(stored.contains("partial "), "{stored}");
    gw.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_run_at_once_and_every_one_is_indexed() {
    const N: usize = 24;
    let fake = FakeProvider::start().await;
    for _ in 0..N {
        fake.push(Reply::sse(wire::chat_text(&["ok"], 1, 1)));
    }
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let http = reqwest::Client::new();
    let turns = (0..N).map(|i| {
        let request = http.post(gw.url("/v1/chat/completions")).json(
            &json!({"model": "main", "messages": [{"role": "user", "content": format!("q{i}")}]}),
        );
        async move {
            let r = request.send().await.unwrap();
            assert_eq!(r.status(), 200);
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["choices"][0]["message"]["content"], "ok", "{body}");
            body["session_id"].as_str().unwrap().to_string()
        }
    });
    let mut sessions = futures::future::join_all(turns).await;
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), N);
    let listed: Value = http.get(gw.url("/v1/sessions?agent=main")).json_of().await;
    let listed = listed["data"].as_array().unwrap();
    assert_eq!(listed.len(), N, "every session has its index row");
    gw.shutdown().await;
}

#[tokio::test]
async fn sessions_are_shown_forked_and_deleted() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["hello back"], 1, 1)));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let http = reqwest::Client::new();
    let body: Value = http
        .post(gw.url("/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "hello"}]}))
        .json_of()
        .await;
    let id = body["session_id"].as_str().unwrap().to_string();
    let shown: Value = http
        .get(gw.url(&format!("/v1/sessions/main/{id}")))
        .json_of()
        .await;
    assert!(
        shown["entries"].to_string().contains("hello back"),
        "{shown}"
    );
    let fork: Value = http
        .post(gw.url(&format!("/v1/sessions/main/{id}/fork")))
        .json_of()
        .await;
    let fork_id = fork["id"].as_str().unwrap();
    assert_ne!(fork_id, id);
    assert_eq!(
        http.delete(gw.url(&format!("/v1/sessions/main/{id}")))
            .status_of()
            .await,
        204
    );
    assert_eq!(
        http.get(gw.url(&format!("/v1/sessions/main/{id}")))
            .status_of()
            .await,
        404
    );
    // The fork keeps its own copy.
    assert_eq!(
        http.get(gw.url(&format!("/v1/sessions/main/{fork_id}")))
            .status_of()
            .await,
        200
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn a_failed_reload_keeps_the_old_generation_serving_and_says_why() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["still here"], 1, 1)));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let http = reqwest::Client::new();
    let good: Value = http.post(gw.url("/admin/reload")).json_of().await;
    assert_eq!(good["generation"], 2, "{good}");
    std::fs::write(&gw.config, "{ not json").unwrap();
    assert_eq!(http.post(gw.url("/admin/reload")).status_of().await, 409);
    let ready: Value = http.get(gw.url("/readyz")).json_of().await;
    assert_eq!(ready["ready"], true, "{ready}");
    assert_eq!(ready["generation"], 2, "{ready}");
    assert!(ready["lastReloadError"].as_str().is_some(), "{ready}");
    let body: Value = http
        .post(gw.url("/v1/chat/completions"))
        .json(&json!({"model": "main", "messages": [{"role": "user", "content": "hi"}]}))
        .json_of()
        .await;
    assert_eq!(
        body["choices"][0]["message"]["content"], "still here",
        "{body}"
    );
    gw.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_streams_its_events_and_the_client_answers_its_approval_requests() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_tool_call(
        "c1",
        "echo",
        &["{\"text\":\"approved words\"}"],
    )));
    fake.push(Reply::sse(wire::chat_text(&["all ", "done"], 1, 1)));
    let dir = tempfile::tempdir().unwrap();
    let gw = start(
        &fake,
        dir.path(),
        json!({"plugins": {
            "paths": [clawhost_tests::plugins_dir().join("policy-guard")],
            "cacheDir": clawhost_tests::cache_dir(),
            "cacheKeyFile": clawhost_tests::cache_key_file(),
            "entries": {"policy-guard": {"config": {"approveTools": ["echo"]}}}
        }}),
        "127.0.0.1:0",
    )
    .await;
    let http = reqwest::Client::new();
    let mut response = http
        .post(gw.url("/v1/runs"))
        .json(&json!({"message": "go", "approvals": "client"}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    read_until(&mut response, &mut seen, "event: approval_request").await;
    let at = seen.find("\"id\":\"appr-").unwrap() + 6;
    let id = seen[at..at + seen[at..].find('"').unwrap()].to_string();
    assert!(seen.contains("\"tool\":\"echo\""), "{seen}");
    let answer = |decision: &str| {
        http.post(gw.url(&format!("/v1/approvals/{id}")))
            .json(&json!({"decision": decision}))
            .send()
    };
    assert_eq!(answer("maybe").await.unwrap().status(), 400);
    assert_eq!(answer("allow-once").await.unwrap().status(), 200);
    // Answered: the id is gone.
    assert_eq!(answer("deny").await.unwrap().status(), 404);
    read_until(&mut response, &mut seen, "event: turn_end").await;
    for mark in [
        "event: model_reply",
        "event: approval\n",
        "\"decision\":\"allow-once\"",
        "event: tool_result",
        "approved words",
        "event: text_delta",
        "\"answer\":\"all done\"",
    ] {
        assert!(seen.contains(mark), "no `{mark}` in:\n{seen}");
    }
    gw.shutdown().await;
}

/// Read a streamed response into `seen` until it holds `mark`.
async fn read_until(response: &mut reqwest::Response, seen: &mut String, mark: &str) {
    tokio::time::timeout(FakeProvider::PATIENCE, async {
        while !seen.contains(mark) {
            match response.chunk().await.unwrap() {
                Some(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                None => panic!("the stream ended before `{mark}`:\n{seen}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no `{mark}` in:\n{seen}"));
}

#[tokio::test]
async fn a_reload_admits_the_plugins_the_edited_config_names() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    assert!(gw
        .gateway
        .host()
        .runner()
        .plugins()
        .plugin("policy-guard")
        .is_none());
    let edited = config_json(
        &fake,
        dir.path(),
        json!({"plugins": {
            "paths": [clawhost_tests::plugins_dir().join("policy-guard")],
            "cacheDir": clawhost_tests::cache_dir(),
            "cacheKeyFile": clawhost_tests::cache_key_file(),
        }}),
    );
    std::fs::write(&gw.config, edited.to_string()).unwrap();
    let report: Value = reqwest::Client::new()
        .post(gw.url("/admin/reload"))
        .json_of()
        .await;
    assert!(
        report["plugins"].to_string().contains("policy-guard"),
        "{report}"
    );
    assert!(gw
        .gateway
        .host()
        .runner()
        .plugins()
        .plugin("policy-guard")
        .is_some());
    gw.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_taking_requests_and_lets_the_turn_in_flight_finish() {
    let fake = FakeProvider::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    fake.push(Reply::Held(
        Box::new(Reply::sse(wire::chat_text(&["finished"], 1, 1))),
        gate.clone(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let mut gw = start(&fake, dir.path(), json!({}), "127.0.0.1:0").await;
    let http = reqwest::Client::new();
    let in_flight = tokio::spawn(
        http.post(gw.url("/v1/chat/completions"))
            .json(&json!({"model": "main", "messages": [{"role": "user", "content": "hi"}]}))
            .json_of(),
    );
    tokio::time::timeout(FakeProvider::PATIENCE, async {
        while fake.requests().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the turn reaches the model");
    let _ = gw.stop.take().unwrap().send(());
    // A new client is turned away while the turn goes on.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let late = reqwest::Client::new()
        .get(gw.url("/v1/models"))
        .send()
        .await;
    assert!(late.is_err(), "a request after shutdown began was served");
    assert!(!gw.server.is_finished(), "the server waits for the turn");
    gate.notify_one();
    let body = tokio::time::timeout(FakeProvider::PATIENCE, in_flight)
        .await
        .expect("the turn finishes")
        .unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"], "finished",
        "{body}"
    );
    tokio::time::timeout(FakeProvider::PATIENCE, &mut gw.server)
        .await
        .expect("the server stops once the turn is done")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_part_reaches_the_model_and_bodies_are_bounded() {
    use base64::Engine as _;
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_text(&["a cat"], 10, 2)));
    let dir = tempfile::tempdir().unwrap();
    let models = json!({"providers": {"fake": {"api": "openai-completions", "baseUrl": fake.url(),
        "models": [{"id": "m", "input": ["text", "image"]}]}}});
    let gw = start(&fake, dir.path(), json!({"models": models}), "127.0.0.1:0").await;
    // A 3 MiB image: over axum's default body limit, within the gateway's.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.resize(3 << 20, 7);
    let data_url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&png)
    );
    let ask = |content: Value| {
        reqwest::Client::new()
            .post(gw.url("/v1/chat/completions"))
            .json(&json!({"model": "main", "messages": [{"role": "user", "content": content}]}))
            .send()
    };
    let ok = ask(json!([{"type": "text", "text": "what is it?"},
                        {"type": "image_url", "image_url": {"url": data_url}}]))
    .await
    .unwrap();
    assert_eq!(ok.status(), 200, "{:?}", ok.text().await);
    let sent = &fake.requests()[0].body["messages"][0]["content"];
    assert_eq!(sent[1]["image_url"]["url"], data_url.as_str());
    // An SVG claiming to be a PNG is refused where it enters.
    let svg = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode("<svg onload=alert(1)>")
    );
    let refused = ask(json!([{"type": "image_url", "image_url": {"url": svg}}]))
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("image refused"));
    // A body over the bound is refused whole.
    let huge = ask(json!("x".repeat(32 << 20))).await.unwrap();
    assert_eq!(huge.status(), 413);
    let body: Value = huge.json().await.unwrap();
    assert_eq!(body["error"]["code"], "request_too_large", "{body}");
    assert_eq!(fake.requests().len(), 1);
    gw.shutdown().await;
}
