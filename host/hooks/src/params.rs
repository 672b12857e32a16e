//! Tool-call parameters as the dispatch path shares them.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

/// The parameters of one tool call as they stand, shared — not copied — by
/// the `before_tool_call` handlers, the tool and the `after_tool_call`
/// handlers, with their JSON text made at most once however many plugins
/// read it. Immutable: a rewrite makes a new `Params`, so the text can
/// never be stale.
#[derive(Clone)]
pub struct Params(Arc<Inner>);

struct Inner {
    value: Value,
    text: OnceLock<String>,
}

impl Params {
    /// Parameters of this value.
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

    /// The value, moved out when nothing else shares it.
    pub fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.value,
            Err(shared) => shared.value.clone(),
        }
    }
}

impl std::ops::Deref for Params {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl From<Value> for Params {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl PartialEq<Value> for Params {
    fn eq(&self, other: &Value) -> bool {
        self.0.value == *other
    }
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.value.fmt(f)
    }
}

impl std::fmt::Display for Params {
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
        let p = Params::new(json!({"a": 1}));
        let shared = p.clone();
        assert_eq!(p.text(), r#"{"a":1}"#);
        assert!(std::ptr::eq(p.text(), shared.text()), "one serialization");
        let rewritten = Params::new(json!({"a": 2}));
        assert_eq!(rewritten.text(), r#"{"a":2}"#);
        assert_eq!(shared.into_value(), json!({"a": 1}));
        assert_eq!(p.into_value(), json!({"a": 1}));
    }
}
