//! The transports against streams recorded by the providers' own SDK test
//! suites (`tests/fixtures/wire`, sources in its `SOURCES.md`), each sent
//! whole and re-cut into 7-byte chunks; then what must go back on the next
//! request — reasoning and images — in each wire format.

use std::sync::Arc;

use clawhost_agent_core::{
    Image, Message, ModelClient, ModelErrorKind, ModelRequest, ModelResponse, Reasoning,
    ReasoningBlock, RunContext, StopReason, ToolCallRequest, ToolResultMessage, UserInput,
};
use clawhost_config::Config;
use clawhost_llm::ModelRegistry;
use clawhost_sessions::EntryBody;
use clawhost_tests::fake_provider::{FakeProvider, Reply};
use clawhost_tests::{config, runner_with, wire};
use serde_json::{json, Value};

/// Three providers on one fake server, one per wire format; `params` are
/// the model's.
fn models(fake: &FakeProvider, params: Value) -> (Config, ModelRegistry) {
    let config = clawhost_tests::one_provider_per_wire_format(
        &fake.url(),
        json!([{"id": "m", "params": params, "input": ["text", "image"]}, {"id": "text-only"}]),
    );
    let registry = ModelRegistry::build(&config).unwrap();
    (config, registry)
}

fn ask(model_ref: &str, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model_ref: model_ref.into(),
        system: None,
        messages: messages.into_iter().map(Into::into).collect(),
        tools: Vec::new(),
        text_sink: None,
    }
}

/// The reply to `fixture`, sent whole and then in 7-byte pieces: both
/// must read the same.
async fn replay(model_ref: &str, fixture: &str) -> Result<ModelResponse, ModelErrorKind> {
    let fake = FakeProvider::start().await;
    let (_, registry) = models(&fake, json!({}));
    fake.push(Reply::sse(wire::recorded(fixture)));
    fake.push(Reply::sse_split(wire::recorded(fixture), 7));
    let whole = registry
        .complete(ask(model_ref, vec![Message::user("hi")]))
        .await;
    let split = registry
        .complete(ask(model_ref, vec![Message::user("hi")]))
        .await;
    assert_eq!(whole, split, "{fixture}: the chunking changed the reply");
    whole.map_err(|e| {
        assert!(!e.message.is_empty());
        e.kind
    })
}

fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_string(), args)
}

fn calls(r: &ModelResponse) -> Vec<(String, Value)> {
    r.tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}

#[tokio::test]
async fn recorded_anthropic_streams_read_as_the_sdk_reads_them() {
    let r = replay("claude/m", "anthropic/basic_response.sse")
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.stop_reason),
        ("Hello there!", StopReason::EndTurn)
    );
    assert_eq!(r.usage.output_tokens, 6);

    let r = replay("claude/m", "anthropic/tool_use_response.sse")
        .await
        .unwrap();
    assert_eq!(r.text, "I'll check the current weather in Paris for you.");
    assert_eq!(
        calls(&r),
        [call("get_weather", json!({"location": "Paris"}))]
    );
    assert_eq!(r.tool_calls[0].id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert_eq!(r.stop_reason, StopReason::ToolUse);

    // The refusal's explanation is what the user reads.
    let r = replay("claude/m", "anthropic/refusal_response.sse")
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.stop_reason),
        (
            "This request was refused due to policy.",
            StopReason::Refusal
        )
    );

    // Thinking is kept whole, with the signature its deltas built.
    let r = replay("claude/m", "anthropic/thinking_then_refusal.sse")
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.stop_reason),
        ("Hi", StopReason::Refusal)
    );
    let [Reasoning {
        model_ref,
        block: ReasoningBlock::Thinking {
            thinking,
            signature,
        },
    }] = r.reasoning.as_slice()
    else {
        panic!("{:?}", r.reasoning)
    };
    assert_eq!(
        model_ref, "claude/m",
        "marked with the model that thought it"
    );
    assert!(
        thinking.starts_with("Simple educational question"),
        "{thinking}"
    );
    assert!(thinking.ends_with("roll with it politely."), "{thinking}");
    assert_eq!(
        signature,
        "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU="
    );

    // Server tools run at the provider: content, never a call for the host.
    for fixture in [
        "anthropic/server_tool_use_response.sse",
        "anthropic/server_tool_then_refusal.sse",
    ] {
        let r = replay("claude/m", fixture).await.unwrap();
        assert!(r.tool_calls.is_empty(), "{fixture}: {:?}", r.tool_calls);
        assert!(!r.text.is_empty(), "{fixture}");
    }

    // A tool input cut off by the output limit is an error saying so.
    assert_eq!(
        replay("claude/m", "anthropic/incomplete_partial_json_response.sse").await,
        Err(ModelErrorKind::Protocol)
    );
}

#[tokio::test]
async fn recorded_chat_completions_streams_read_as_the_sdk_reads_them() {
    let r = replay("chat/m", "openai-chat/text.sse").await.unwrap();
    assert!(
        r.text
            .starts_with("I'm unable to provide real-time weather updates."),
        "{}",
        r.text
    );
    assert_eq!(
        (r.stop_reason, r.usage.input_tokens, r.usage.output_tokens),
        (StopReason::EndTurn, 14, 30)
    );

    let r = replay("chat/m", "openai-chat/max_tokens.sse")
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.stop_reason),
        ("{\"", StopReason::MaxTokens)
    );

    let r = replay("chat/m", "openai-chat/refusal.sse").await.unwrap();
    assert_eq!(
        (r.text.as_str(), r.stop_reason),
        (
            "I'm sorry, I can't assist with that request.",
            StopReason::Refusal
        )
    );

    let r = replay("chat/m", "openai-chat/tool_call.sse").await.unwrap();
    assert_eq!(
        calls(&r),
        [call(
            "GetWeatherArgs",
            json!({"city": "Edinburgh", "country": "UK", "units": "c"})
        )]
    );
    assert_eq!(r.stop_reason, StopReason::ToolUse);

    let r = replay("chat/m", "openai-chat/two_tool_calls.sse")
        .await
        .unwrap();
    assert_eq!(
        calls(&r),
        [
            call(
                "GetWeatherArgs",
                json!({"city": "Edinburgh", "country": "GB", "units": "c"})
            ),
            call(
                "get_stock_price",
                json!({"ticker": "AAPL", "exchange": "NASDAQ"})
            ),
        ]
    );

    // `n: 3`: three interleaved choices are refused, never joined.
    assert_eq!(
        replay("chat/m", "openai-chat/three_choices.sse").await,
        Err(ModelErrorKind::Protocol)
    );
}

#[tokio::test]
async fn recorded_responses_streams_read_as_the_sdk_reads_them() {
    let r = replay("resp/m", "openai-responses/text.sse").await.unwrap();
    assert_eq!(
        (
            r.text.as_str(),
            r.stop_reason,
            r.usage.input_tokens,
            r.usage.output_tokens
        ),
        ("Hello world", StopReason::EndTurn, 10, 2)
    );
    assert!(r.reasoning.is_empty());

    // The reasoning item, complete only in the final `output`, is kept once.
    let r = replay("resp/m", "openai-responses/reasoning.sse")
        .await
        .unwrap();
    assert_eq!(r.text, "The answer is 42");
    let [Reasoning {
        block: ReasoningBlock::ResponsesItem { item },
        ..
    }] = r.reasoning.as_slice()
    else {
        panic!("{:?}", r.reasoning)
    };
    assert_eq!(item["id"], "r1");
    assert_eq!(r.reasoning[0].text(), "Chain: Step 1. Step 2.");
}

#[tokio::test]
async fn responses_server_tools_are_provider_side_content() {
    let fake = FakeProvider::start().await;
    let (_, registry) = models(&fake, json!({}));
    fake.push(Reply::sse(wire::responses_web_search("Rust 1.91 is out.")));
    let r = registry
        .complete(ask("resp/m", vec![Message::user("news?")]))
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.tool_calls.len(), r.stop_reason),
        ("Rust 1.91 is out.", 0, StopReason::EndTurn)
    );
}

/// A turn of the built-in loop on `model_ref` calling `word_count` of the
/// `text-tools` plugin; returns the outcome and the two requests sent.
async fn tool_turn(
    fake: &FakeProvider,
    model_ref: &str,
    params: Value,
    user: UserInput,
) -> (clawhost_agent_core::TurnOutcome, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let (models_config, _) = models(fake, params);
    let mut cfg = config(json!({}), dir.path());
    cfg.models = models_config.models;
    let runner = runner_with(cfg.clone(), &["text-tools"]).await;
    let registry = Arc::new(ModelRegistry::build(&cfg).unwrap());
    let outcome = runner
        .turn_loop(registry)
        .run_with_context(&RunContext::new("main", model_ref), &[], &user, &user.text)
        .await
        .unwrap();
    let bodies = fake.requests().into_iter().map(|r| r.body).collect();
    (outcome, bodies)
}

#[tokio::test]
async fn anthropic_thinking_goes_back_unchanged_after_a_tool_call() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse_split(
        wire::anthropic_thinking_tool_call(
            &["The user wants ", "a word count."],
            "EqQBCgIYAhIM1gbcDa9GJwZA2b3h",
            "EmwKAhgBEgy3va3pzix/LafPsn4a",
            ("toolu_1", "word_count", "{\"text\": \"a b c\"}"),
        ),
        9,
    ));
    fake.push(Reply::sse(wire::anthropic_text(&["Three words."], 80, 4)));
    let (outcome, bodies) = tool_turn(
        &fake,
        "claude/m",
        json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        "count the words in 'a b c'".into(),
    )
    .await;
    assert_eq!(outcome.answer, "Three words.");
    assert_eq!(bodies[0]["thinking"]["budget_tokens"], 2048);
    // The assistant message starts with the blocks exactly as they came.
    assert_eq!(
        bodies[1]["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "The user wants a word count.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "tool_use", "id": "toolu_1", "name": "word_count", "input": {"text": "a b c"}},
        ])
    );
    // The transcript keeps them: a stored entry reads back the same.
    let Message::Assistant { reasoning, .. } = &outcome.new_messages[1] else {
        panic!("{:?}", outcome.new_messages)
    };
    assert_eq!(reasoning.len(), 2);
    let entry = EntryBody::from_message(outcome.new_messages[1].clone());
    let stored: EntryBody = serde_json::from_str(&serde_json::to_string(&entry).unwrap()).unwrap();
    assert_eq!(stored.message(), Some(&outcome.new_messages[1]));
}

#[tokio::test]
async fn responses_reasoning_items_go_back_with_their_encrypted_content() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::sse(wire::responses_reasoning_tool_call(
        "Counting words.",
        "gAAAAABencrypted==",
        ("call_7", "word_count", "{\"text\":\"a b\"}"),
    )));
    fake.push(Reply::sse(wire::responses_text(&["Two."], 60, 3)));
    let (outcome, bodies) = tool_turn(
        &fake,
        "resp/m",
        json!({"reasoning": {"effort": "low"}}),
        "count 'a b'".into(),
    )
    .await;
    assert_eq!(outcome.answer, "Two.");
    // Nothing is stored at OpenAI, so the encrypted reasoning is asked for …
    assert_eq!(bodies[0]["store"], false);
    assert_eq!(bodies[0]["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(bodies[0]["reasoning"], json!({"effort": "low"}));
    // … and sent back, whole, before the call it led to.
    let input = &bodies[1]["input"];
    assert_eq!(
        input[1],
        json!({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Counting words."}], "encrypted_content": "gAAAAABencrypted=="})
    );
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(input[3]["type"], "function_call_output");
    // Another model, even of the same provider, never gets it (it could
    // not decrypt it), nor does another wire format.
    let other = clawhost_llm::providers::openai_responses::body(
        &ask("resp/text-only", outcome.new_messages.clone()),
        "text-only",
        &[],
    )
    .to_value()
    .unwrap();
    assert!(!other.to_string().contains("encrypted"), "{other}");
    assert_eq!(other["input"][1]["type"], "function_call", "{other}");
    let chat = clawhost_llm::providers::openai_completions::body(
        &ask("chat/m", outcome.new_messages.clone()),
        "m",
        &[],
    )
    .to_value()
    .unwrap();
    assert!(!chat.to_string().contains("encrypted"), "{chat}");
    let claude = clawhost_llm::providers::anthropic::body(
        &ask("claude/m", outcome.new_messages.clone()),
        "m",
        1024,
        &[],
    )
    .to_value()
    .unwrap();
    assert!(!claude.to_string().contains("encrypted"), "{claude}");
}

/// A conversation with a user image (inline) and a tool that returned one
/// (by URL).
fn with_images() -> Vec<Message> {
    let png = Image::from_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let url = Image::from_url("https://example.com/chart.png").unwrap();
    vec![
        Message::User {
            text: "what is in this picture?".into(),
            images: vec![png],
        },
        Message::tool_calls(vec![ToolCallRequest {
            id: "c1".into(),
            name: "screenshot".into(),
            arguments: json!({}),
        }]),
        Message::ToolResult(ToolResultMessage {
            call_id: "c1".into(),
            tool: "screenshot".into(),
            content: "the screen".into(),
            is_error: false,
            images: vec![url],
        }),
    ]
}

#[tokio::test]
async fn images_reach_every_wire_format_in_its_own_shape() {
    let fake = FakeProvider::start().await;
    let (_, registry) = models(&fake, json!({}));
    fake.push(Reply::sse(wire::chat_text(&["ok"], 1, 1)));
    fake.push(Reply::sse(wire::responses_text(&["ok"], 1, 1)));
    fake.push(Reply::sse(wire::anthropic_text(&["ok"], 1, 1)));
    for model in ["chat/m", "resp/m", "claude/m"] {
        registry.complete(ask(model, with_images())).await.unwrap();
    }
    let bodies: Vec<Value> = fake.requests().into_iter().map(|r| r.body).collect();
    let data_url = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==";

    // Chat Completions: image_url parts; a tool message is text only, so its
    // images follow in a user message naming the call.
    let m = &bodies[0]["messages"];
    assert_eq!(
        m[0]["content"],
        json!([{"type": "text", "text": "what is in this picture?"},
               {"type": "image_url", "image_url": {"url": data_url}}])
    );
    assert_eq!(
        m[2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "the screen"})
    );
    assert_eq!(
        m[3],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Image(s) returned by tool call c1 (screenshot):"},
            {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}}]})
    );

    // Responses: input_image parts, in the message and in the call output.
    let i = &bodies[1]["input"];
    assert_eq!(
        i[0]["content"][1],
        json!({"type": "input_image", "image_url": data_url, "detail": "auto"})
    );
    assert_eq!(
        i[2]["output"],
        json!([{"type": "input_text", "text": "the screen"},
               {"type": "input_image", "image_url": "https://example.com/chart.png", "detail": "auto"}])
    );

    // Anthropic: image blocks (base64 or url source), inside the tool_result.
    // (Checked below, after a model that takes no images.)
    let anthropic = bodies[2].clone();
    fake.push(Reply::sse(wire::chat_text(&["ok"], 1, 1)));
    registry
        .complete(ask("chat/text-only", with_images()))
        .await
        .unwrap();
    let text_only = &fake.requests()[3].body["messages"];
    assert_eq!(
        text_only[0]["content"],
        "what is in this picture?\n[1 image(s) omitted: chat/text-only does not take images]"
    );
    assert_eq!(
        text_only.as_array().unwrap().len(),
        3,
        "no image message follows"
    );
    let bodies = [Value::Null, Value::Null, anthropic];
    let m = &bodies[2]["messages"];
    assert_eq!(
        m[0]["content"][0],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}})
    );
    assert_eq!(
        m[2]["content"][0]["content"],
        json!([{"type": "text", "text": "the screen"},
               {"type": "image", "source": {"type": "url", "url": "https://example.com/chart.png"}}])
    );
}
