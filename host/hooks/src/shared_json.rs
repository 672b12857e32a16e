//! JSON the tool-call path shares: a call's parameters and its result.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

/// A JSON value shared — not copied — along one tool call, with its JSON
/// text made at most once however many plugins read it: the parameters (by
/// the `before_tool_call` handlers, the tool and the `after_tool_call`
/// handlers) and the result (by the `tool_result` and `after_tool_call`
/// handlers and the model's copy). Immutable: a rewrite makes a new
/// `SharedJson`, so the text can never be stale.
#[derive(Clone)]
pub struct SharedJson(Arc<Inner>);

struct Inner {
    value: Value,
    text: OnceLock<String>,
}

impl SharedJson {
    /// Shared JSON of this value.
    pub fn new(value: Value) -> Self {
        Self(Arc::new(Inner {
            value,
            text: OnceLock::new(),
        }))
    }

    /// The value.
    pub fn value(&self) -> &Value {
        &self.0.value
    }

    /// The JSON text, serialized on first use.
    pub fn text(&self) -> &str {
        self.0
            .text
            .get_or_init(|| serde_json::to_string(&self.0.value).unwrap_or_default())
    }

    /// The JSON text, moved out when nothing else shares it (made now if
    /// nothing read it yet).
    pub fn into_text(self) -> String {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => match inner.text.into_inner() {
                Some(text) => text,
                None => serde_json::to_string(&inner.value).unwrap_or_default(),
            },
            Err(shared) => SharedJson(shared).text().to_string(),
        }
    }

    /// The value, moved out when nothing else shares it.
    pub fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.value,
            Err(shared) => shared.value.clone(),
        }
    }
}

impl std::ops::Deref for SharedJson {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl From<Value> for SharedJson {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for SharedJson {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl PartialEq<Value> for SharedJson {
    fn eq(&self, other: &Value) -> bool {
        self.0.value == *other
    }
}

impl std::fmt::Debug for SharedJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.value.fmt(f)
    }
}

impl std::fmt::Display for SharedJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_text_is_made_once_and_shared_and_a_new_value_is_a_new_text() {
        let p = SharedJson::new(json!({"a": 1}));
        let shared = p.clone();
        assert_eq!(p.text(), r#"{"a":1}"#);
        assert!(std::ptr::eq(p.text(), shared.text()), "one serialization");
        let rewritten = SharedJson::new(json!({"a": 2}));
        assert_eq!(rewritten.text(), r#"{"a":2}"#);
        assert_eq!(shared.into_value(), json!({"a": 1}));
        assert_eq!(p.into_value(), json!({"a": 1}));
    }
}
