//! Refuses JSON objects that repeat a key. serde keeps the last of two equal
//! keys of a map without a word, so a second `plugins.entries.<id>` would
//! silently drop the first one's sha256 pin.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Check that no object in `text` (JSON5, so JSON too) repeats a key. The
/// error names the key's path (e.g. `plugins.entries.guard`) and says why;
/// a syntax error is reported with its line and column.
pub(crate) fn check(text: &str) -> Result<(), (String, String)> {
    let mut de = json5::Deserializer::from_str(text).map_err(|e| (String::new(), e.to_string()))?;
    let mut path = Vec::new();
    match (Walk { path: &mut path }).deserialize(&mut de) {
        Ok(()) => Ok(()),
        Err(e) => Err((path.join("."), e.to_string())),
    }
}

/// The value of `text` when it is strict JSON with no repeated key, read
/// with serde_json (the JSON5 parser is several times slower, and a config
/// grows with its plugin entries); `None` for anything else (JSON5 syntax,
/// a repeated key, a syntax error), which [`check`] and the JSON5 parser
/// then read and report as before.
pub(crate) fn strict_json(text: &str) -> Option<serde_json::Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = UniqueValue.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Reads one JSON value in one pass, refusing an object that repeats a key
/// (what [`strict_json`] reads; [`Walk`] only checks, for JSON5 errors).
struct UniqueValue;

impl<'de> DeserializeSeed<'de> for UniqueValue {
    type Value = serde_json::Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueValue {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(b.into())
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
        serde_json::Number::from_f64(n)
            .map(serde_json::Value::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(s.into())
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(s.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(UniqueValue)? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom("a repeated key"));
            }
            let value = map.next_value_seed(UniqueValue)?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

/// Walks one JSON value; `path` holds the keys down to the value being read
/// (left in place on error, so it names where the error is).
struct Walk<'p> {
    path: &'p mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            self.path.push(format!("[{i}]"));
            if seq.next_element_seed(Walk { path: self.path })?.is_none() {
                self.path.pop();
                return Ok(());
            }
            self.path.pop();
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(key.clone());
            if !seen.insert(key) {
                return Err(de::Error::custom(
                    "this key appears twice in one object; remove one (JSON parsers keep only the last)",
                ));
            }
            map.next_value_seed(Walk { path: self.path })?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_repeated_key_is_named_with_its_path() {
        let (key, e) =
            super::check(r#"{"plugins": {"entries": {"guard": {"sha256": "aa"}, "guard": {}}}}"#)
                .unwrap_err();
        assert_eq!(key, "plugins.entries.guard");
        assert!(e.contains("appears twice"), "{e}");
        let (key, _) = super::check(r#"{"a": [{"b": 1}, {"b": 1, "b": 2}]}"#).unwrap_err();
        assert_eq!(key, "a.[1].b");
        assert!(super::check(r#"{"a": {"b": 1}, "b": {"a": [1, 1]}}"#).is_ok());
        // JSON5: comments, unquoted keys, trailing commas.
        let (key, _) = super::check("{a: 1, // one\n a: 2,}").unwrap_err();
        assert_eq!(key, "a");
    }

    #[test]
    fn strict_json_reads_as_json5_does_and_leaves_the_rest_to_it() {
        let text = r#"{"a": [1, -2, 3.5, 1e3, true, null],
            "b": {"s": "t\u00e9\n\"q\" ${X}", "e": {}, "l": []}}"#;
        let fast = super::strict_json(text).expect("strict JSON");
        let json5: serde_json::Value = json5::from_str(text).unwrap();
        assert_eq!(fast["b"], json5["b"]);
        for i in 0..6 {
            assert_eq!(fast["a"][i].as_f64(), json5["a"][i].as_f64(), "{i}");
        }
        // The same value serde_json reads, numbers and escapes included.
        let nested = r#"{"x": [0.1, -0.0, 1e-7, 12345678901234567890, -9223372036854775808],
            "y": {"z": "\ud83d\ude00", "n": null, "b": false}, "w": [[], [{}]]}"#;
        let direct: serde_json::Value = serde_json::from_str(nested).unwrap();
        assert_eq!(super::strict_json(nested).unwrap(), direct);
        assert_eq!(
            super::strict_json(r#"[{"a": {"a": 1}}]"#).unwrap()[0]["a"]["a"],
            1
        );
        // Valid JSON the JSON5 parser refuses ("error parsing integer").
        let big = super::strict_json("[18446744073709551615]").unwrap();
        assert_eq!(big[0].as_u64(), Some(u64::MAX));
        for other in [
            "{a: 1}",
            r#"{"a": 1,}"#,
            r#"{"a": 1} // c"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": [{"b": 1, "b": 1}]}"#,
            r#"{"a": 1} x"#,
            "",
        ] {
            assert_eq!(super::strict_json(other), None, "{other}");
        }
    }
}
