//! Answers that do not simply end: cut off at the output token limit, or a
//! refusal. Each wire format reports them; the loop reports or continues a
//! cut-off as configured; the transcript, the CLI events and the gateway say
//! so.

use std::sync::Arc;

use clawhost_agent_core::{
    Message, ModelClient, ModelErrorKind, ModelRequest, RunContext, StopReason, TurnEvent,
};
use clawhost_config::Config;
use clawhost_llm::ModelRegistry;
use clawhost_runner::{AgentHost, TurnRequest};
use clawhost_sessions::EntryBody;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::wire;
use serde_json::{json, Value};

fn registry(fake: &FakeProvider) -> ModelRegistry {
    let config = clawhost_tests::one_provider_per_wire_format(&fake.url(), json!([{"id": "m"}]));
    ModelRegistry::build(&config).unwrap()
}

fn ask(model_ref: &str) -> ModelRequest {
    ModelRequest {
        model_ref: model_ref.into(),
        system: None,
        messages: vec![Message::user("write a long story").into()],
        tools: Vec::new(),
        text_sink: None,
    }
}

#[tokio::test]
async fn every_wire_format_reports_a_cut_off_and_a_refusal() {
    let fake = FakeProvider::start().await;
    let models = registry(&fake);
    let cases: [(&str, Vec<String>, StopReason, &str); 6] = [
        (
            "chat/m",
            wire::chat_cut_off(&["Once upon ", "a ti"]),
            StopReason::MaxTokens,
            "Once upon a ti",
        ),
        (
            "chat/m",
            wire::chat_refusal(&["I can't ", "help with that."]),
            StopReason::Refusal,
            "I can't help with that.",
        ),
        (
            "resp/m",
            wire::responses_cut_off(&["Once ", "upon"]),
            StopReason::MaxTokens,
            "Once upon",
        ),
        (
            "resp/m",
            wire::responses_refusal(&["I won't ", "do that."]),
            StopReason::Refusal,
            "I won't do that.",
        ),
        (
            "claude/m",
            wire::anthropic_stopped(&["Once ", "upon"], 5, 9, "max_tokens"),
            StopReason::MaxTokens,
            "Once upon",
        ),
        (
            "claude/m",
            wire::anthropic_stopped(&["I can't"], 5, 2, "refusal"),
            StopReason::Refusal,
            "I can't",
        ),
    ];
    for (model, stream, reason, text) in cases {
        fake.push(Reply::sse(stream));
        let reply = models.complete(ask(model)).await.unwrap();
        assert_eq!(
            (reply.stop_reason, reply.text.as_str()),
            (reason, text),
            "{model}"
        );
    }
}

#[tokio::test]
async fn a_tool_call_cut_off_inside_its_arguments_says_so() {
    let fake = FakeProvider::start().await;
    let models = registry(&fake);
    fake.push(Reply::sse(wire::chat_tool_call_cut_off(
        "c1",
        "write",
        "{\"path\":\"a.txt\",\"content\":\"half",
    )));
    let err = models.complete(ask("chat/m")).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Protocol);
    assert!(
        err.message.contains("cut off at the output token limit"),
        "{}",
        err.message
    );
}

/// A host on the fake provider, `extra` merged into `agents.defaults`.
async fn host(fake: &FakeProvider, dir: &std::path::Path, defaults: Value) -> AgentHost {
    let mut agent = json!({"model": "chat/m"});
    agent
        .as_object_mut()
        .unwrap()
        .extend(defaults.as_object().unwrap().clone());
    let config = json!({
        "models": {"providers": {"chat": {"baseUrl": fake.url(), "api": "openai-completions",
                                           "apiKey": "sk-test", "models": [{"id": "m"}]}}},
        "agents": {"defaults": agent},
        "sessions": {"dir": dir.join("sessions")},
    });
    let config = Config::from_json_str(&config.to_string(), dir).unwrap();
    AgentHost::start(config, None).await.unwrap().0
}

fn turn(message: &str) -> TurnRequest {
    TurnRequest {
        agent: "main".into(),
        session: None,
        message: message.into(),
        images: Vec::new(),
        model: None,
    }
}

#[tokio::test]
async fn a_cut_off_answer_is_reported_and_stored_as_such_by_default() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let host = host(&fake, dir.path(), json!({})).await;
    fake.push(Reply::sse(wire::chat_cut_off(&["The first ", "half"])));
    let ctx = RunContext::new("main", "chat/m");
    let reply = host.run_turn(&turn("tell me"), &ctx).await.unwrap();
    assert_eq!(reply.outcome.stop_reason, StopReason::MaxTokens);
    assert_eq!(reply.outcome.answer, "The first half");
    assert!(
        ctx.events.snapshot().iter().any(|e| matches!(
            e,
            TurnEvent::FinalAnswer {
                stop_reason: StopReason::MaxTokens,
                ..
            }
        )),
        "the run events carry the stop reason"
    );
    let stored = host
        .store()
        .open_read_only("main", &reply.session_id)
        .unwrap();
    let stopped: Vec<_> = stored
        .entries()
        .iter()
        .filter_map(|e| match &e.body {
            EntryBody::Custom { custom_type, data } if custom_type == "turn_stopped" => {
                Some(data.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(stopped, vec![json!({"reason": "max_tokens"})]);

    // A refusal is stored as the answer, marked a refusal.
    fake.push(Reply::sse(wire::chat_refusal(&["No."])));
    let reply = host.run_turn(&turn("do harm"), &ctx).await.unwrap();
    assert_eq!(
        (reply.outcome.stop_reason, reply.outcome.answer.as_str()),
        (StopReason::Refusal, "No.")
    );
}

#[tokio::test]
async fn on_max_tokens_continue_asks_again_and_joins_the_parts() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let host = host(&fake, dir.path(), json!({"onMaxTokens": "continue"})).await;
    fake.push(Reply::sse(wire::chat_cut_off(&["The first ", "half"])));
    fake.push(Reply::sse(wire::chat_text(&[", the second half."], 20, 5)));
    let ctx = RunContext::new("main", "chat/m");
    let reply = host.run_turn(&turn("tell me"), &ctx).await.unwrap();
    assert_eq!(reply.outcome.answer, "The first half, the second half.");
    assert_eq!(reply.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(reply.outcome.iterations, 2);
    let second = fake.requests()[1].body.to_string();
    assert!(
        second.contains("The first half") && second.contains(clawhost_agent_core::CONTINUE_PROMPT),
        "{second}"
    );
}

#[tokio::test]
async fn the_gateway_answers_length_and_refusal_as_openai_does() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let host = Arc::new(host(&fake, dir.path(), json!({})).await);
    let gateway = clawhost_gateway::Gateway::new(host).unwrap();
    let listener = gateway.listen(Some("127.0.0.1:0")).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(gateway.clone().serve(listener, std::future::pending()));
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        let request = http.post(format!("{url}{path}")).json(&body);
        async move {
            let response = request.send().await.unwrap();
            assert!(response.status().is_success(), "{}", response.status());
            response.json::<Value>().await.unwrap()
        }
    };
    let chat = json!({"model": "main", "messages": [{"role": "user", "content": "go"}]});

    fake.push(Reply::sse(wire::chat_cut_off(&["half"])));
    let got = post("/v1/chat/completions", chat.clone()).await;
    assert_eq!(got["choices"][0]["finish_reason"], "length", "{got}");
    assert_eq!(got["choices"][0]["message"]["content"], "half");

    fake.push(Reply::sse(wire::chat_refusal(&["No."])));
    let got = post("/v1/chat/completions", chat).await;
    let message = &got["choices"][0]["message"];
    assert_eq!(
        (&message["content"], &message["refusal"]),
        (&Value::Null, &json!("No.")),
        "{got}"
    );

    fake.push(Reply::sse(wire::chat_cut_off(&["half"])));
    let got = post("/v1/responses", json!({"model": "main", "input": "go"})).await;
    assert_eq!(got["status"], "incomplete", "{got}");
    assert_eq!(got["incomplete_details"]["reason"], "max_output_tokens");
    server.abort();
}
