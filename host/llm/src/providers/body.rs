//! A request body written straight from the request: the conversation and
//! the tools are JSON borrowed from the messages and specs ([`Wire`]), so a
//! long history is serialized once instead of first being copied into a
//! `serde_json::Value` tree that is then written and dropped.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// JSON that borrows from the request where it can.
#[derive(Debug)]
pub enum Wire<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A string of the request.
    Str(&'a str),
    /// A string made for the body (a URL, a serialized argument object).
    String(String),
    /// A value of the request (a tool's schema, a call's arguments).
    Value(&'a Value),
    /// An array.
    Array(Vec<Wire<'a>>),
    /// An object, its keys in this order.
    Object(Vec<(&'static str, Wire<'a>)>),
}

impl<'a> Wire<'a> {
    /// An object of these fields, in this order.
    pub fn object<const N: usize>(fields: [(&'static str, Wire<'a>); N]) -> Self {
        Wire::Object(fields.into())
    }

    /// Add a field at the end of an object (nothing for other kinds).
    pub fn push(&mut self, key: &'static str, value: Wire<'a>) {
        if let Wire::Object(fields) = self {
            fields.push((key, value));
        }
    }
}

impl Serialize for Wire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Wire::Null => s.serialize_unit(),
            Wire::Bool(b) => s.serialize_bool(*b),
            Wire::Str(t) => s.serialize_str(t),
            Wire::String(t) => s.serialize_str(t),
            Wire::Value(v) => v.serialize(s),
            Wire::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Wire::Object(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// A request body: top-level fields as values (the request params, then
/// what the host sets, in that order), some of them written from [`Wire`]s.
#[derive(Debug, Default)]
pub struct RequestBody<'a> {
    fields: Map<String, Value>,
    wired: Vec<(&'static str, Wire<'a>)>,
}

impl<'a> RequestBody<'a> {
    /// A body holding the request params: provider params, then model params
    /// (a model's key wins); an `extra_body` object is flattened into the
    /// body, as the OpenAI SDKs do. Keys the host owns are set afterwards.
    pub fn with_params(layers: &[&Map<String, Value>]) -> Self {
        let mut fields = Map::new();
        for layer in layers {
            for (k, v) in layer.iter() {
                if k == "extra_body" {
                    if let Value::Object(extra) = v {
                        fields.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                } else {
                    fields.insert(k.clone(), v.clone());
                }
            }
        }
        Self {
            fields,
            wired: Vec::new(),
        }
    }

    /// The top-level fields held as values (a field set with [`Self::set_wire`]
    /// reads `null` here).
    pub fn fields(&mut self) -> &mut Map<String, Value> {
        &mut self.fields
    }

    /// Set `key` to a value (in the place a param gave it, else last).
    pub fn set(&mut self, key: &str, value: Value) {
        self.wired.retain(|(k, _)| *k != key);
        self.fields.insert(key.to_string(), value);
    }

    /// Set `key` to a [`Wire`] (in the place a param gave it, else last).
    pub fn set_wire(&mut self, key: &'static str, wire: Wire<'a>) {
        self.fields.insert(key.to_string(), Value::Null);
        self.wired.retain(|(k, _)| *k != key);
        self.wired.push((key, wire));
    }

    /// The body as JSON text.
    pub fn to_bytes(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec(self)
    }

    /// The body as a value (to inspect it; the transport sends [`Self::to_bytes`]).
    pub fn to_value(&self) -> serde_json::Result<Value> {
        serde_json::to_value(self)
    }
}

impl Serialize for RequestBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.fields.len()))?;
        for (k, v) in &self.fields {
            match self.wired.iter().find(|(w, _)| w == k) {
                Some((_, wire)) => map.serialize_entry(k, wire)?,
                None => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wired_fields_keep_the_place_a_param_gave_them_and_params_yield_to_the_host() {
        let params = json!({"messages": "from a param", "temperature": 0.2,
                            "extra_body": {"top_k": 5}});
        let mut body = RequestBody::with_params(&[params.as_object().unwrap()]);
        body.set("model", json!("m"));
        let text = String::from("hi");
        body.set_wire(
            "messages",
            Wire::Array(vec![Wire::object([
                ("content", Wire::Str(&text)),
                ("role", Wire::Str("user")),
            ])]),
        );
        body.set("stream", json!(true));
        // The text a value tree of the same inserts writes (keys in insertion
        // order with serde_json's `preserve_order`, as in this workspace;
        // sorted without it).
        let tree = json!({"messages": [{"content": "hi", "role": "user"}], "temperature": 0.2,
                          "top_k": 5, "model": "m", "stream": true});
        assert_eq!(body.to_bytes().unwrap(), serde_json::to_vec(&tree).unwrap());
        assert_eq!(body.to_value().unwrap()["messages"][0]["content"], "hi");
        // A value set over a wired field replaces it.
        body.set("messages", json!([]));
        assert_eq!(body.to_value().unwrap()["messages"], json!([]));
    }
}
