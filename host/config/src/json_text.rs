//! Reads config text, JSON or the JSON5 a person writes (comments, trailing
//! commas, unquoted keys, single quotes, hex numbers), with the one parser
//! that also edits it in place (`jsonc-parser`, see `edit`). An object that
//! repeats a key is refused: serde keeps the last of two equal keys without
//! a word, so a second `plugins.entries.<id>` would silently drop the first
//! one's sha256 pin.

use jsonc_parser::ast::{self, ObjectPropName};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde_json::{Map, Number, Value};

use crate::ParseError;

/// What the config reader and editor accept.
pub(crate) fn options() -> ParseOptions {
    ParseOptions {
        allow_missing_commas: false,
        ..ParseOptions::default()
    }
}

/// The value of `text`. The error's key is the path of a repeated key or an
/// unusable number (empty for a syntax error, whose reason has its line and
/// column).
pub(crate) fn read(text: &str) -> Result<Value, ParseError> {
    let parsed = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options())
        .map_err(|e| ParseError::at(&[], e.to_string()))?;
    let root = parsed
        .value
        .ok_or_else(|| ParseError::at(&[], "the file holds no JSON value"))?;
    convert(root, text, &mut Vec::new())
}

/// Whether `gap`, the text between two array elements, holds one comma
/// and otherwise only blanks and comments (jsonc-parser lets an array miss
/// its commas; JSON and JSON5 do not).
fn one_comma(gap: &str) -> bool {
    let mut commas = 0;
    let mut rest = gap;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            match c {
                ',' => commas += 1,
                c if c.is_whitespace() => {}
                _ => return false,
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    commas == 1
}

/// `value` (parsed from `text`) as JSON; on error `path` names where (and
/// is empty for a syntax error, whose reason says the line).
fn convert(value: ast::Value<'_>, text: &str, path: &mut Vec<String>) -> Result<Value, ParseError> {
    Ok(match value {
        ast::Value::StringLit(s) => Value::String(s.value.into_owned()),
        ast::Value::NumberLit(n) => Value::Number(number(n.value).ok_or_else(|| {
            ParseError::at(
                path,
                format!("`{}` is not a number this config can hold", n.value),
            )
        })?),
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(array) => {
            let mut items = Vec::with_capacity(array.elements.len());
            let mut previous_end = None;
            for (i, element) in array.elements.into_iter().enumerate() {
                if let Some(end) = previous_end {
                    if !one_comma(text.get(end..element.start()).unwrap_or_default()) {
                        let before = &text[..element.start()];
                        let line = before.matches('\n').count() + 1;
                        let column =
                            before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                        return Err(ParseError::at(
                            &[],
                            format!("expected a comma between array elements at {line}:{column}"),
                        ));
                    }
                }
                previous_end = Some(element.end());
                path.push(format!("[{i}]"));
                items.push(convert(element, text, path)?);
                path.pop();
            }
            Value::Array(items)
        }
        ast::Value::Object(object) => {
            let mut map = Map::new();
            for prop in object.properties {
                let key = match prop.name {
                    ObjectPropName::String(s) => s.value.into_owned(),
                    ObjectPropName::Word(w) => w.value.to_string(),
                };
                path.push(key.clone());
                if map.contains_key(&key) {
                    return Err(ParseError::at(
                        path,
                        "this key appears twice in one object; remove one (JSON parsers keep only the last)",
                    ));
                }
                let value = convert(prop.value, text, path)?;
                path.pop();
                map.insert(key, value);
            }
            Value::Object(map)
        }
    })
}

/// A number literal as JSON: decimal as serde_json reads it (so an integer
/// past `i64` keeps its value), or hexadecimal, with an optional sign.
fn number(text: &str) -> Option<Number> {
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    let (negative, digits) = match unsigned.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, unsigned),
    };
    let hex = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"));
    match hex {
        Some(hex) => i64::from_str_radix(hex, 16)
            .ok()
            .map(|n| Number::from(if negative { -n } else { n })),
        None => serde_json::from_str::<Number>(unsigned).ok(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::read;

    #[test]
    fn a_repeated_key_is_named_with_its_path() {
        let e = read(r#"{"plugins": {"entries": {"guard": {"sha256": "aa"}, "guard": {}}}}"#)
            .unwrap_err();
        assert_eq!(e.key, "plugins.entries.guard");
        assert!(e.reason.contains("appears twice"), "{e}");
        let e = read(r#"{"a": [{"b": 1}, {"b": 1, "b": 2}]}"#).unwrap_err();
        assert_eq!(e.key, "a[1].b");
        assert!(read(r#"{"a": {"b": 1}, "b": {"a": [1, 1]}}"#).is_ok());
        // JSON5: comments, unquoted keys, trailing commas.
        assert_eq!(read("{a: 1, // one\n a: 2,}").unwrap_err().key, "a");
    }

    #[test]
    fn json_reads_as_serde_json_reads_it_and_json5_as_written() {
        let nested = r#"{"x": [0.1, -0.0, 1e-7, 12345678901234567890, -9223372036854775808],
            "y": {"z": "\ud83d\ude00 t\u00e9\n\"q\" ${X}", "n": null, "b": false}, "w": [[], [{}]]}"#;
        let direct: serde_json::Value = serde_json::from_str(nested).unwrap();
        assert_eq!(read(nested).unwrap(), direct);
        assert_eq!(
            read("[18446744073709551615]").unwrap()[0].as_u64(),
            Some(u64::MAX)
        );
        let five =
            "// a comment\n{a: 'single', /* block */ b: [1, +2, 0x1F, -0x10,], 'c d': {e: true,},}";
        assert_eq!(
            read(five).unwrap(),
            json!({"a": "single", "b": [1, 2, 31, -16], "c d": {"e": true}})
        );
    }

    #[test]
    fn syntax_errors_say_where_and_nothing_else_passes() {
        for bad in [
            "",
            "{",
            r#"{"a": 1} x"#,
            r#"{"a" 1}"#,
            r#"{"a": 1 "b": 2}"#,
            "[1 2]",
        ] {
            let e = read(bad).unwrap_err();
            assert_eq!(e.key, "", "{bad}");
            assert!(!e.reason.is_empty(), "{bad}");
        }
        let reason = read("{\n  \"a\": 1,\n  \"b\": ]\n}").unwrap_err().reason;
        assert!(reason.contains('3'), "names the line: {reason}");
    }
}
