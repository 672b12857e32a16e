//! Example tool-result middleware: redacts secrets in tool results and annotates
//! them. The operator must grant it (`plugins.entries.redact-results.grants.toolResults`).
//!
//! Every string in a result is scanned for tokens that look like API keys
//! (`sk-…`, `ghp_…`, `AKIA…`) or e-mail addresses; each is replaced by
//! `[REDACTED]`, and a `"redactions"` count is added to object results.
//!
//! Config: `{ "where": "model" | "transcript" }` (default `model`). With
//! `transcript` the model sees results unchanged and the redaction applies
//! to what the session stores instead (`tool_result_persist`, and
//! `before_message_write` for the user's and the model's text, which needs
//! `hooks.allowConversationAccess`); `"keepOut": ["word", ...]` keeps messages
//! containing a word out of the transcript altogether.

use clawhost_sdk::{
    export_plugin, AfterToolCall, Hook, Message, MessageWriteEvent, Plugin, ResultDecision,
    ToolResultPersistEvent, WriteDecision,
};
use serde_json::Value;

#[derive(Default)]
struct Redact;

fn is_secret(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '@' && c != '_' && c != '-');
    let key_like = ["sk-", "ghp_", "AKIA"]
        .iter()
        .any(|p| t.starts_with(p) && t.len() >= 12);
    let email = t
        .split_once('@')
        .is_some_and(|(user, host)| !user.is_empty() && host.contains('.'));
    key_like || email
}

fn redact_str(s: &str, count: &mut u64) -> String {
    s.split_inclusive(char::is_whitespace)
        .map(|piece| {
            let token = piece.trim_end();
            if is_secret(token) {
                *count += 1;
                format!("[REDACTED]{}", &piece[token.len()..])
            } else {
                piece.to_string()
            }
        })
        .collect()
}

fn redact(value: &mut Value, count: &mut u64) {
    match value {
        Value::String(s) => *s = redact_str(s, count),
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, count)),
        Value::Object(map) => map.values_mut().for_each(|v| redact(v, count)),
        _ => {}
    }
}

fn keep_out(text: &str) -> Option<String> {
    let config = clawhost_sdk::config();
    let lower = text.to_lowercase();
    config["keepOut"]
        .as_array()?
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| lower.contains(&w.to_lowercase()))
        .map(|w| format!("mentions `{w}`"))
}

impl Plugin for Redact {
    fn hooks(&self) -> Vec<(Hook, i32)> {
        if clawhost_sdk::config()["where"] == "transcript" {
            vec![(Hook::ToolResultPersist, 0), (Hook::BeforeMessageWrite, 0)]
        } else {
            vec![(Hook::ToolResult, 0)]
        }
    }

    fn tool_result_persist(&self, event: ToolResultPersistEvent) -> Option<String> {
        let mut count = 0;
        let text = redact_str(&event.content, &mut count);
        (count > 0).then_some(text)
    }

    fn before_message_write(&self, event: MessageWriteEvent) -> WriteDecision {
        let mut count = 0;
        let text = match &event.message {
            Message::User(t) => t,
            Message::Assistant(a) => &a.text,
            Message::ToolResult(r) => &r.content,
        };
        if let Some(why) = keep_out(text) {
            return WriteDecision::Block(why);
        }
        let message = match event.message {
            Message::User(t) => Message::User(redact_str(&t, &mut count)),
            Message::Assistant(mut a) => {
                a.text = redact_str(&a.text, &mut count);
                Message::Assistant(a)
            }
            // Stored tool results are redacted by `tool_result_persist`.
            m @ Message::ToolResult(_) => m,
        };
        if count == 0 {
            WriteDecision::Keep
        } else {
            WriteDecision::Replace(message)
        }
    }

    fn tool_result(&self, event: AfterToolCall) -> ResultDecision {
        let mut count = 0;
        let replaced = match event.outcome {
            Ok(json) => {
                let mut value = json.into_value();
                redact(&mut value, &mut count);
                if let Value::Object(map) = &mut value {
                    if count > 0 {
                        map.insert("redactions".into(), count.into());
                    }
                }
                Ok(value)
            }
            Err(message) => Err(redact_str(&message, &mut count)),
        };
        if count == 0 {
            ResultDecision::Keep
        } else {
            ResultDecision::Replace(replaced)
        }
    }
}

export_plugin!(Redact);
