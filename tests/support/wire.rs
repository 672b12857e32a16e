//! SSE fixtures in the providers' real wire formats.

use serde_json::{json, Value};

fn data(v: Value) -> String {
    format!("data: {v}\n\n")
}

fn event(name: &str, v: Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

/// OpenAI Chat Completions chunk envelope.
fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
           "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
}

/// Chat Completions: a text answer cut off at the output token limit
/// (`finish_reason: "length"`).
pub fn chat_cut_off(pieces: &[&str]) -> Vec<String> {
    let mut out = chat_text(pieces, 10, 16);
    let finish = out.len() - 3;
    out[finish] = data(chunk(json!({}), json!("length")));
    out
}

/// Chat Completions: a refusal in pieces (`delta.refusal`, `content` null),
/// as OpenAI streams one.
pub fn chat_refusal(pieces: &[&str]) -> Vec<String> {
    let mut out = vec![data(chunk(
        json!({"role": "assistant", "content": null, "refusal": ""}),
        Value::Null,
    ))];
    out.extend(
        pieces
            .iter()
            .map(|p| data(chunk(json!({"refusal": p}), Value::Null))),
    );
    out.push(data(chunk(json!({}), json!("stop"))));
    out.push("data: [DONE]\n\n".into());
    out
}

/// Chat Completions: a tool call whose arguments the output token limit cut.
pub fn chat_tool_call_cut_off(id: &str, name: &str, args: &str) -> Vec<String> {
    let mut out = chat_tool_call(id, name, &[args]);
    let finish = out.len() - 3;
    out[finish] = data(chunk(json!({}), json!("length")));
    out
}

/// Chat Completions: a text answer in pieces, with usage and `[DONE]`.
pub fn chat_text(pieces: &[&str], input: u64, output: u64) -> Vec<String> {
    let mut out = vec![data(chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ))];
    out.extend(
        pieces
            .iter()
            .map(|p| data(chunk(json!({"content": p}), Value::Null))),
    );
    out.push(data(chunk(json!({}), json!("stop"))));
    out.push(data(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                         "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}})));
    out.push("data: [DONE]\n\n".into());
    out
}

/// Chat Completions: one tool call whose arguments arrive in pieces.
pub fn chat_tool_call(id: &str, name: &str, arg_pieces: &[&str]) -> Vec<String> {
    let mut out = vec![data(chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
        Value::Null,
    ))];
    out.extend(arg_pieces.iter().map(|p| {
        data(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
            Value::Null,
        ))
    }));
    out.push(data(chunk(json!({}), json!("tool_calls"))));
    out.push(data(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                         "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}})));
    out.push("data: [DONE]\n\n".into());
    out
}

/// Responses: a text answer in pieces.
pub fn responses_text(pieces: &[&str], input: u64, output: u64) -> Vec<String> {
    let text: String = pieces.concat();
    let mut out = vec![
        event(
            "response.created",
            json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        ),
        event(
            "response.content_part.added",
            json!({"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        ),
    ];
    out.extend(pieces.iter().enumerate().map(|(i, p)| event("response.output_text.delta", json!({"type": "response.output_text.delta", "sequence_number": 3 + i, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": p}))));
    out.push(event("response.output_text.done", json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": text})));
    out.push(event("response.completed", json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response", "status": "completed",
        "output": [{"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": input, "output_tokens": output, "total_tokens": input + output}}})));
    out
}

/// Responses: a text answer cut off at the output token limit
/// (`response.incomplete`, `max_output_tokens`).
pub fn responses_cut_off(pieces: &[&str]) -> Vec<String> {
    let mut out = responses_text(pieces, 10, 16);
    let text: String = pieces.concat();
    *out.last_mut().unwrap() = event(
        "response.incomplete",
        json!({"type": "response.incomplete", "response": {"id": "resp_1", "object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"id": "msg_1", "type": "message", "role": "assistant", "status": "incomplete", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": 10, "output_tokens": 16, "total_tokens": 26}}}),
    );
    out
}

/// Responses: a refusal content part in pieces (`response.refusal.delta`).
pub fn responses_refusal(pieces: &[&str]) -> Vec<String> {
    let text: String = pieces.concat();
    let mut out = vec![
        event(
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_3", "object": "response", "status": "in_progress", "output": []}}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_3", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        ),
        event(
            "response.content_part.added",
            json!({"type": "response.content_part.added", "item_id": "msg_3", "output_index": 0, "content_index": 0, "part": {"type": "refusal", "refusal": ""}}),
        ),
    ];
    out.extend(pieces.iter().map(|p| event("response.refusal.delta", json!({"type": "response.refusal.delta", "item_id": "msg_3", "output_index": 0, "content_index": 0, "delta": p}))));
    out.push(event("response.refusal.done", json!({"type": "response.refusal.done", "item_id": "msg_3", "output_index": 0, "content_index": 0, "refusal": text})));
    out.push(event("response.completed", json!({"type": "response.completed", "response": {"id": "resp_3", "object": "response", "status": "completed",
        "output": [{"id": "msg_3", "type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": text}]}],
        "usage": {"input_tokens": 9, "output_tokens": 7, "total_tokens": 16}}})));
    out
}

/// Responses: one function call whose arguments arrive in pieces.
pub fn responses_tool_call(call_id: &str, name: &str, arg_pieces: &[&str]) -> Vec<String> {
    let args: String = arg_pieces.concat();
    let mut out = vec![
        event(
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_2", "status": "in_progress"}}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}}),
        ),
    ];
    out.extend(arg_pieces.iter().map(|p| event("response.function_call_arguments.delta", json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": p}))));
    out.push(event("response.function_call_arguments.done", json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": args})));
    out.push(event("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": args, "call_id": call_id, "name": name}})));
    out.push(event("response.completed", json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "usage": {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}}})));
    out
}

fn message_start(input: u64) -> String {
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": input, "output_tokens": 1}}}),
    )
}

/// Anthropic Messages: a text answer in pieces (with a `ping`).
pub fn anthropic_text(pieces: &[&str], input: u64, output: u64) -> Vec<String> {
    anthropic_stopped(pieces, input, output, "end_turn")
}

/// Anthropic Messages: text in pieces, then `stop_reason` (`max_tokens`,
/// `refusal`, …).
pub fn anthropic_stopped(
    pieces: &[&str],
    input: u64,
    output: u64,
    stop_reason: &str,
) -> Vec<String> {
    let mut out = vec![
        message_start(input),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event("ping", json!({"type": "ping"})),
    ];
    out.extend(pieces.iter().map(|p| event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}))));
    out.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output}})));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// Anthropic Messages: a short text, then a tool use whose input arrives in pieces.
pub fn anthropic_tool_call(id: &str, name: &str, arg_pieces: &[&str]) -> Vec<String> {
    let mut out = vec![
        message_start(40),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me check."}}),
        ),
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ),
    ];
    out.extend(arg_pieces.iter().map(|p| event("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}))));
    out.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    ));
    out.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 33}})));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// Anthropic Messages: a server tool (web search) the provider runs itself,
/// its result block, then the answer text, in the shape the API streams.
pub fn anthropic_server_tool(answer: &str) -> Vec<String> {
    vec![
        message_start(30),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"weather in Paris\"}"}}),
        ),
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
                "content": [{"type": "web_search_result", "title": "Paris weather", "url": "https://weather.example/paris", "encrypted_content": "EqgfCioI", "page_age": "1 hour ago"}]}}),
        ),
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": answer}}),
        ),
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        ),
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"output_tokens": 12, "server_tool_use": {"web_search_requests": 1}}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
}

/// Anthropic Messages: an `error` event mid-stream.
pub fn anthropic_overloaded() -> Vec<String> {
    vec![
        message_start(10),
        event(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]
}

/// A stream recorded by a provider SDK's own test suite, from
/// `tests/fixtures/wire/<path>` (sources in `SOURCES.md` there), as its SSE
/// events.
pub fn recorded(path: &str) -> Vec<String> {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/wire")
        .join(path);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", file.display()));
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| format!("{}\n\n", e.trim_start_matches('\n')))
        .collect()
}

/// Anthropic Messages with extended thinking: a `thinking` block streamed
/// as `thinking_delta`s then its `signature_delta` (as in the recorded
/// `anthropic/thinking_then_refusal.sse`), a `redacted_thinking` block,
/// then a tool use.
pub fn anthropic_thinking_tool_call(
    thinking: &[&str],
    signature: &str,
    redacted: &str,
    (id, name, args): (&str, &str, &str),
) -> Vec<String> {
    let mut out = vec![
        message_start(50),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
    ];
    out.extend(thinking.iter().map(|t| event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": t}}))));
    out.push(event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": signature}})));
    out.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push(event("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": redacted}})));
    out.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    ));
    out.push(event("content_block_start", json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
    out.push(event("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": args}})));
    out.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 2}),
    ));
    out.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 90}})));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// Responses: a reasoning item (summary streamed, then the whole item with
/// its `encrypted_content`, as with `store: false`), then a function call.
pub fn responses_reasoning_tool_call(
    summary: &str,
    encrypted: &str,
    (call_id, name, args): (&str, &str, &str),
) -> Vec<String> {
    let reasoning = json!({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": encrypted});
    let call = json!({"id": "fc_1", "type": "function_call", "status": "completed", "arguments": args, "call_id": call_id, "name": name});
    vec![
        event(
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_9", "status": "in_progress"}}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        ),
        event(
            "response.reasoning_summary_text.delta",
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": summary}),
        ),
        event(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": args}),
        ),
        event(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 1, "item": call}),
        ),
        event(
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_9", "status": "completed", "output": [reasoning, call],
                   "usage": {"input_tokens": 40, "output_tokens": 70, "output_tokens_details": {"reasoning_tokens": 50}, "total_tokens": 110}}}),
        ),
    ]
}

/// Responses: a web search the provider runs itself (`web_search_call`
/// item and its progress events), then the answer text.
pub fn responses_web_search(answer: &str) -> Vec<String> {
    let search = json!({"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "rust release"}});
    let mut out = responses_text(&[answer], 20, 8);
    let tail = out.split_off(1);
    out.push(event(
        "response.output_item.added",
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}}),
    ));
    for step in ["in_progress", "searching", "completed"] {
        let kind = format!("response.web_search_call.{step}");
        out.push(event(
            &kind,
            json!({"type": kind, "output_index": 0, "item_id": "ws_1"}),
        ));
    }
    out.push(event(
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": search}),
    ));
    out.extend(tail);
    out
}
