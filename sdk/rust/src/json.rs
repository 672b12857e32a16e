//! JSON handed in by the host, parsed only when the plugin looks at it.

use std::cell::OnceCell;
use std::fmt;
use std::ops::Deref;

use serde_json::Value;

/// JSON text from the host, parsed on first use: a hook that never reads the
/// parameters pays no parsing. Reads like a [`Value`] (`params["path"]`);
/// invalid text reads as `Null`.
#[derive(Clone)]
pub struct Json {
    text: String,
    value: OnceCell<Value>,
}

impl Json {
    /// Wrap JSON text.
    pub fn from_text(text: String) -> Self {
        Self {
            text,
            value: OnceCell::new(),
        }
    }

    /// The JSON text as the host sent it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed value (`Null` if the text is not JSON).
    pub fn value(&self) -> &Value {
        self.value
            .get_or_init(|| serde_json::from_str(&self.text).unwrap_or(Value::Null))
    }

    /// The parsed value, owned.
    pub fn into_value(self) -> Value {
        self.value();
        self.value.into_inner().unwrap_or(Value::Null)
    }
}

impl Deref for Json {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl From<Value> for Json {
    fn from(value: Value) -> Self {
        Self {
            text: value.to_string(),
            value: OnceCell::from(value),
        }
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}
