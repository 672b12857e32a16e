//! Example tool-result middleware: redacts secrets in tool results and annotates
//! them. The operator must grant it (`plugins.entries.redact-results.grants.toolResults`).
//!
//! Every string in a result is scanned for tokens that look like API keys
//! (`sk-…`, `ghp_…`, `AKIA…`) or e-mail addresses; each is replaced by
//! `[REDACTED]`, and a `"redactions"` count is added to object results.

use clawhost_sdk::{export_plugin, AfterToolCall, Hook, Plugin, ResultDecision};
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

impl Plugin for Redact {
    fn hooks(&self) -> Vec<(Hook, i32)> {
        vec![(Hook::ToolResult, 0)]
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
