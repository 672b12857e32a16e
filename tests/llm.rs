//! The transports against a local fake provider speaking the real SSE formats.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clawhost_agent_core::{
    Message, ModelClient, ModelErrorKind, ModelRequest, RunContext, StopReason, ToolCallRequest,
    ToolResultMessage, ToolSpec,
};
use clawhost_config::Config;
use clawhost_llm::ModelRegistry;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, runner_with, wire};
use serde_json::{json, Value};

fn registry(providers: Value) -> ModelRegistry {
    let config = Config::from_json_str(
        &json!({"models": {"providers": providers}}).to_string(),
        std::path::Path::new("."),
    )
    .unwrap();
    ModelRegistry::build(&config).unwrap()
}

fn provider(fake: &FakeProvider, api: &str, extra: Value) -> Value {
    let mut p = json!({"baseUrl": fake.url(), "api": api, "apiKey": "sk-test-SECRET-123",
                       "retry": {"maxAttempts": 3, "baseDelayMs": 1, "maxDelayMs": 2000},
                       "streamIdleTimeoutMs": 2000});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    p
}

fn request(model_ref: &str) -> ModelRequest {
    ModelRequest {
        model_ref: model_ref.into(),
        system: Some("be brief".into()),
        messages: vec![
            Message::user("count words"),
            Message::tool_calls(vec![ToolCallRequest {
                id: "call_0".into(),
                name: "word_count".into(),
                arguments: json!({"text": "a b"}),
            }]),
            Message::ToolResult(ToolResultMessage {
                call_id: "call_0".into(),
                tool: "word_count".into(),
                content: "{\"words\":2}".into(),
                is_error: false,
                images: Vec::new(),
            }),
        ]
        .into_iter()
        .map(Into::into)
        .collect(),
        tools: vec![ToolSpec {
            name: "word_count".into(),
            description: "count".into(),
            parameters: json!({"type": "object"}).into(),
        }],
        text_sink: None,
    }
}

#[tokio::test]
async fn chat_completions_streams_text_usage_and_split_tool_calls() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse_split(
        wire::chat_tool_call("call_9", "word_count", &["{\"te", "xt\": \"one ", "two\"}"]),
        7,
    ));
    fake.push(Reply::sse(wire::chat_text(&["Two ", "words."], 12, 3)));
    let reg = registry(
        json!({"openai": provider(&fake, "openai-completions", json!({
            "params": {"temperature": 0.2},
            "models": [{"id": "gpt-test", "params": {"temperature": 0.5, "extra_body": {"service_tier": "flex"}}}]
        }))}),
    );
    let first = reg.complete(request("openai/gpt-test")).await.unwrap();
    assert_eq!(
        first.tool_calls,
        vec![ToolCallRequest {
            id: "call_9".into(),
            name: "word_count".into(),
            arguments: json!({"text": "one two"})
        }]
    );
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    // The text streams to the sink delta by delta, as the provider sent it.
    let pieces = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = pieces.clone();
    let mut streamed = request("openai/gpt-test");
    streamed.text_sink = Some(clawhost_agent_core::TextSink::new(move |t| {
        seen.lock().unwrap().push(t.to_string())
    }));
    let second = reg.complete(streamed).await.unwrap();
    assert_eq!(*pieces.lock().unwrap(), ["Two ", "words."]);
    assert_eq!(
        (
            second.text.as_str(),
            second.usage.input_tokens,
            second.usage.output_tokens
        ),
        ("Two words.", 12, 3)
    );
    assert_eq!(second.stop_reason, StopReason::EndTurn);

    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/chat/completions");
    assert_eq!(sent.headers["authorization"], "Bearer sk-test-SECRET-123");
    let b = &sent.body;
    assert_eq!(
        (
            b["model"].clone(),
            b["stream"].clone(),
            b["temperature"].clone(),
            b["service_tier"].clone()
        ),
        (json!("gpt-test"), json!(true), json!(0.5), json!("flex"))
    );
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        b["messages"][2]["tool_calls"][0]["function"],
        json!({"name": "word_count", "arguments": "{\"text\":\"a b\"}"})
    );
    assert_eq!(
        b["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_0", "content": "{\"words\":2}"})
    );
    assert_eq!(b["tools"][0]["function"]["name"], "word_count");
}

#[tokio::test]
async fn responses_streams_text_and_split_function_calls() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse_split(
        wire::responses_tool_call("call_r", "word_count", &["{\"text\"", ": \"x y z\"}"]),
        11,
    ));
    fake.push(Reply::sse(wire::responses_text(
        &["Three", " words."],
        30,
        4,
    )));
    let reg = registry(json!({"oai": provider(&fake, "openai-responses", json!({}))}));
    let first = reg.complete(request("oai/gpt-r")).await.unwrap();
    assert_eq!(first.tool_calls[0].arguments, json!({"text": "x y z"}));
    assert_eq!(first.tool_calls[0].id, "call_r");
    assert_eq!(
        (first.stop_reason, first.usage.input_tokens),
        (StopReason::ToolUse, 30)
    );
    let second = reg.complete(request("oai/gpt-r")).await.unwrap();
    assert_eq!(
        (second.text.as_str(), second.stop_reason),
        ("Three words.", StopReason::EndTurn)
    );

    let b = &fake.requests()[0].body;
    assert_eq!(fake.requests()[0].path, "/responses");
    assert_eq!(b["instructions"], "be brief");
    assert_eq!(
        b["input"][1],
        json!({"type": "function_call", "call_id": "call_0", "name": "word_count", "arguments": "{\"text\":\"a b\"}"})
    );
    assert_eq!(
        b["input"][2],
        json!({"type": "function_call_output", "call_id": "call_0", "output": "{\"words\":2}"})
    );
    assert_eq!(b["tools"][0]["name"], "word_count");
}

#[tokio::test]
async fn anthropic_messages_streams_text_and_split_tool_use() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse_split(
        wire::anthropic_tool_call("toolu_1", "word_count", &["{\"text\": ", "\"a b c d\"}"]),
        5,
    ));
    fake.push(Reply::sse(wire::anthropic_text(
        &["Four", " words."],
        50,
        6,
    )));
    let reg = registry(
        json!({"anthropic": provider(&fake, "anthropic-messages", json!({"models": [{"id": "claude-test", "maxTokens": 1024}]}))}),
    );
    let first = reg
        .complete(request("anthropic/claude-test"))
        .await
        .unwrap();
    assert_eq!(first.text, "Let me check.");
    assert_eq!(first.tool_calls[0].arguments, json!({"text": "a b c d"}));
    assert_eq!(
        (
            first.stop_reason,
            first.usage.input_tokens,
            first.usage.output_tokens
        ),
        (StopReason::ToolUse, 40, 33)
    );
    let second = reg
        .complete(request("anthropic/claude-test"))
        .await
        .unwrap();
    assert_eq!(
        (second.text.as_str(), second.usage.output_tokens),
        ("Four words.", 6)
    );

    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "sk-test-SECRET-123");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert_eq!(sent.body["max_tokens"], 1024);
    assert_eq!(sent.body["system"], "be brief");
    assert_eq!(sent.body["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(
        sent.body["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "{\"words\":2}", "is_error": false}]})
    );
    assert_eq!(
        sent.body["tools"][0]["input_schema"],
        json!({"type": "object"})
    );
}

#[tokio::test]
async fn anthropic_server_tools_are_provider_side_content_not_calls() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse_split(
        wire::anthropic_server_tool("Sunny, 21 °C."),
        7,
    ));
    let reg = registry(json!({"anthropic": provider(&fake, "anthropic-messages", json!({}))}));
    let reply = reg
        .complete(request("anthropic/claude-test"))
        .await
        .unwrap();
    assert_eq!(reply.text, "Sunny, 21 °C.");
    assert!(reply.tool_calls.is_empty(), "{:?}", reply.tool_calls);
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn cached_prompt_tokens_are_counted_in_every_wire_format() {
    let fake = FakeProvider::start().await;
    // Chat Completions: `prompt_tokens_details.cached_tokens` in the usage chunk.
    let mut chat = wire::chat_text(&["hi"], 2006, 300);
    let usage = chat.len() - 2;
    chat[usage] = format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
                         "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0}}})
    );
    // Responses: `input_tokens_details.cached_tokens` in `response.completed`.
    let mut responses = wire::responses_text(&["hi"], 2006, 300);
    let done = responses.len() - 1;
    responses[done] = format!(
        "event: response.completed\ndata: {}\n\n",
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
               "usage": {"input_tokens": 2006, "input_tokens_details": {"cached_tokens": 1920},
                         "output_tokens": 300, "total_tokens": 2306}}})
    );
    // Messages: `cache_read_input_tokens` / `cache_creation_input_tokens` in `message_start`.
    let mut messages = wire::anthropic_text(&["hi"], 86, 300);
    messages[0] = format!(
        "event: message_start\ndata: {}\n\n",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
               "content": [], "model": "claude-test", "stop_reason": null,
               "usage": {"input_tokens": 86, "cache_read_input_tokens": 1920,
                         "cache_creation_input_tokens": 12, "output_tokens": 1}}})
    );
    let reg = registry(json!({
        "chat": provider(&fake, "openai-completions", json!({})),
        "resp": provider(&fake, "openai-responses", json!({})),
        "anthropic": provider(&fake, "anthropic-messages", json!({})),
    }));
    for (model, stream, (input, read, write)) in [
        ("chat/m", chat, (2006, 1920, 0)),
        ("resp/m", responses, (2006, 1920, 0)),
        ("anthropic/claude-test", messages, (86, 1920, 12)),
    ] {
        fake.push(Reply::sse(stream));
        let usage = reg.complete(request(model)).await.unwrap().usage;
        assert_eq!(
            (
                usage.input_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                usage.output_tokens
            ),
            (input, read, write, 300),
            "{model}"
        );
    }
}

#[tokio::test]
async fn malformed_events_are_clear_protocol_errors() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(vec![
        "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}\n\n".into(),
    ]));
    fake.push(Reply::sse(vec![
        "event: response.output_text.delta\ndata: not json\n\n".into(),
    ]));
    fake.push(Reply::sse(wire::anthropic_tool_call(
        "t",
        "word_count",
        &["{\"text\": "],
    ))); // never closed
    fake.push(Reply::sse(wire::chat_text(&["cut"], 1, 1)[..2].to_vec())); // ends before finish_reason
    let reg = registry(json!({
        "c": provider(&fake, "openai-completions", json!({})),
        "r": provider(&fake, "openai-responses", json!({})),
        "a": provider(&fake, "anthropic-messages", json!({})),
    }));
    for (model, needle) in [
        ("c/m", "malformed"),
        ("r/m", "malformed response.output_text.delta"),
        ("a/m", "not valid JSON"),
        ("c/m", "ended before"),
    ] {
        let err = reg.complete(request(model)).await.unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Protocol, "{model}: {err}");
        assert!(err.message.contains(needle), "{model}: {}", err.message);
    }
}

#[tokio::test]
async fn rate_limits_honour_retry_after_then_succeed() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::status(429, json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})).with_header("retry-after-ms", "300"));
    fake.push(Reply::sse(wire::chat_text(&["ok"], 1, 1)));
    let reg = registry(json!({"c": provider(&fake, "openai-completions", json!({}))}));
    let started = Instant::now();
    let reply = reg.complete(request("c/m")).await.unwrap();
    assert_eq!(reply.text, "ok");
    // Backoff alone would be ~1 ms; only honouring retry-after waits this long.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_with_a_bound() {
    let fake = FakeProvider::start().await;
    for _ in 0..2 {
        fake.push(Reply::status(503, json!({"error": {"message": "busy"}})));
    }
    fake.push(Reply::sse(wire::chat_text(&["third time"], 1, 1)));
    for _ in 0..3 {
        fake.push(Reply::status(500, json!({"error": {"message": "boom"}})));
    }
    let reg = registry(json!({"c": provider(&fake, "openai-completions", json!({}))}));
    assert_eq!(
        reg.complete(request("c/m")).await.unwrap().text,
        "third time"
    );
    let err = reg.complete(request("c/m")).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Unavailable);
    assert!(
        err.message.contains("after 3 attempts") && err.message.contains("boom"),
        "{}",
        err.message
    );
    assert_eq!(fake.requests().len(), 6);
}

#[tokio::test]
async fn client_errors_are_typed_not_retried_and_never_show_the_key() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::status(401, json!({"error": {"message": "Incorrect API key provided: sk-test-SECRET-123", "type": "invalid_request_error", "code": "invalid_api_key"}})));
    fake.push(Reply::status(
        404,
        json!({"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}),
    ));
    fake.push(Reply::status(400, json!({"error": {"message": "This model's maximum context length is 128000 tokens.", "code": "context_length_exceeded"}})));
    fake.push(Reply::status(400, json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}})));
    let reg = registry(
        json!({"c": provider(&fake, "openai-completions", json!({})), "a": provider(&fake, "anthropic-messages", json!({}))}),
    );
    let auth = reg.complete(request("c/m")).await.unwrap_err();
    assert_eq!(auth.kind, ModelErrorKind::Auth);
    assert!(
        !auth.message.contains("SECRET") && auth.message.contains("[redacted]"),
        "{}",
        auth.message
    );
    assert_eq!(
        reg.complete(request("c/nope")).await.unwrap_err().kind,
        ModelErrorKind::UnknownModel
    );
    assert_eq!(
        reg.complete(request("c/m")).await.unwrap_err().kind,
        ModelErrorKind::ContextOverflow
    );
    assert_eq!(
        reg.complete(request("a/m")).await.unwrap_err().kind,
        ModelErrorKind::ContextOverflow
    );
    assert_eq!(fake.requests().len(), 4, "4xx must not be retried");
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse_stalling(
        wire::chat_text(&["never", "finished"], 1, 1),
        2,
    ));
    let reg = registry(
        json!({"c": provider(&fake, "openai-completions", json!({"streamIdleTimeoutMs": 200}))}),
    );
    let err = tokio::time::timeout(FakeProvider::PATIENCE, reg.complete(request("c/m")))
        .await
        .expect("bounded")
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout);
    assert!(err.message.contains("200 ms"), "{}", err.message);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_typed() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::anthropic_overloaded()));
    let reg = registry(json!({"a": provider(&fake, "anthropic-messages", json!({}))}));
    let err = reg.complete(request("a/m")).await.unwrap_err();
    assert_eq!(
        (err.kind, err.message.as_str()),
        (ModelErrorKind::Unavailable, "Overloaded")
    );
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let fake = FakeProvider::start().await;
    let reg = registry(
        json!({"c": {"baseUrl": fake.url(), "api": "openai-completions", "apiKeyEnv": "CLAWHOST_TEST_UNSET_KEY"}}),
    );
    let err = reg.complete(request("c/m")).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Auth);
    assert!(
        err.message.contains("$CLAWHOST_TEST_UNSET_KEY is not set"),
        "{}",
        err.message
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn a_whole_turn_runs_a_plugin_tool_over_an_openai_compatible_endpoint() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::chat_tool_call(
        "call_1",
        "word_count",
        &["{\"text\":\"", "hello wasm world\"}"],
    )));
    fake.push(Reply::sse(wire::chat_text(&["It has 3 words."], 40, 6)));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(json!({}), dir.path());
    cfg.models = serde_json::from_value(
        json!({"providers": {"ollama": {"baseUrl": fake.url(), "api": "openai-completions"}}}),
    )
    .unwrap();
    let runner = runner_with(cfg.clone(), &["text-tools"]).await;
    let model = Arc::new(ModelRegistry::build(&cfg).unwrap());
    let ctx = RunContext::new("main", "ollama/llama3");
    let out = runner
        .run_turn(model, &ctx, &[], "how many words in 'hello wasm world'?")
        .await
        .unwrap();
    assert_eq!(out.answer, "It has 3 words.");
    let second = &fake.requests()[1].body;
    assert_eq!(
        second["messages"][2]["content"],
        "{\"chars\":16,\"lines\":1,\"words\":3}"
    );
    assert!(
        fake.requests()[0].headers.get("authorization").is_none(),
        "no key configured, none sent"
    );
}

/// Streams recorded by the providers' SDK test suites, and what goes back.
#[path = "wire_corpus.rs"]
mod wire_corpus;

/// Fuzz targets for the SSE parsers (proptest): every provider's stream,
/// split at arbitrary byte boundaries, damaged or replaced by noise.
mod sse_fuzz {
    use std::time::Duration;

    use clawhost_agent_core::{ModelError, ModelResponse};
    use clawhost_llm::providers::{anthropic, openai_completions, openai_responses};
    use clawhost_llm::transport::read_stream;
    use clawhost_llm::EventParser;
    use clawhost_tests::wire;
    use proptest::prelude::*;

    fn parser(api: usize) -> Box<dyn EventParser> {
        match api {
            0 => Box::<openai_completions::Parser>::default(),
            1 => Box::<openai_responses::Parser>::default(),
            _ => Box::<anthropic::Parser>::default(),
        }
    }

    /// Parse `bytes` delivered in chunks cut at `cuts`.
    fn parse(
        api: usize,
        bytes: &[u8],
        cuts: &[prop::sample::Index],
    ) -> Result<ModelResponse, ModelError> {
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.extend([0, bytes.len()]);
        points.sort_unstable();
        points.dedup();
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = points
            .windows(2)
            .map(|w| Ok(bytes[w[0]..w[1]].to_vec()))
            .collect();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut parser = parser(api);
        runtime.block_on(read_stream(
            futures::stream::iter(chunks),
            parser.as_mut(),
            Duration::from_secs(5),
            "fuzz",
            None,
        ))
    }

    fn stream(api: usize, text: &[&str], args: &[&str]) -> Vec<u8> {
        let mut events = match api {
            0 => wire::chat_text(text, 3, 4),
            1 => wire::responses_text(text, 3, 4),
            _ => wire::anthropic_text(text, 3, 4),
        };
        if !args.is_empty() {
            events = match api {
                0 => wire::chat_tool_call("c1", "tool", args),
                1 => wire::responses_tool_call("c1", "tool", args),
                _ => wire::anthropic_tool_call("c1", "tool", args),
            };
        }
        events.concat().into_bytes()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn any_chunking_of_a_stream_gives_the_same_reply(
            api in 0usize..3,
            text in prop::collection::vec("[a-zé ✓\\n\"\\\\{}]{0,12}", 1..5),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
        ) {
            let pieces: Vec<&str> = text.iter().map(String::as_str).collect();
            let bytes = stream(api, &pieces, &[]);
            let whole = parse(api, &bytes, &[]).unwrap();
            prop_assert_eq!(&whole.text, &text.concat());
            prop_assert_eq!(parse(api, &bytes, &cuts).unwrap(), whole);
        }

        #[test]
        fn tool_arguments_split_anywhere_are_assembled(
            api in 0usize..3,
            value in prop::collection::btree_map("[a-z]{1,5}", "[a-z0-9 ✓]{0,8}", 0..4),
            splits in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
        ) {
            let json = serde_json::to_string(&value).unwrap();
            let chars: Vec<char> = json.chars().collect();
            let mut at: Vec<usize> = splits.iter().map(|s| s.index(chars.len() + 1)).collect();
            at.extend([0, chars.len()]);
            at.sort_unstable();
            at.dedup();
            let pieces: Vec<String> = at.windows(2).map(|w| chars[w[0]..w[1]].iter().collect()).collect();
            let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let bytes = stream(api, &[], &pieces);
            let reply = parse(api, &bytes, &cuts).unwrap();
            prop_assert_eq!(reply.tool_calls.len(), 1);
            prop_assert_eq!(&reply.tool_calls[0].arguments, &serde_json::to_value(&value).unwrap());
        }

        #[test]
        fn noise_never_panics(api in 0usize..3, noise in prop::collection::vec(any::<u8>(), 0..512), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8)) {
            let _ = parse(api, &noise, &cuts);
        }

        #[test]
        fn a_damaged_stream_is_parsed_or_refused_without_panicking(
            api in 0usize..3,
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            cut_at in any::<prop::sample::Index>(),
        ) {
            let mut bytes = stream(api, &["hello ", "world"], &[]);
            let i = at.index(bytes.len());
            bytes[i] = byte;
            let truncated = &bytes[..cut_at.index(bytes.len() + 1)];
            let _ = parse(api, &bytes, &[]);
            let _ = parse(api, truncated, &[]);
        }
    }
}
