//! `${VAR}` in configuration strings (`VAR` in `[A-Z_][A-Z0-9_]*`, as
//! OpenClaw matches): replaced by the environment variable (for secrets such
//! as API keys); `$${VAR}` writes `${VAR}` itself; anything else stays text.
//! An unset or empty variable is an error naming the key and the variable,
//! never a literal `${VAR}` sent to a provider.

use serde_json::Value;

use crate::ParseError;

/// A `${VAR}` whose variable is unset or empty.
#[derive(Debug, thiserror::Error)]
#[error("environment variable `{0}` is not set (the config uses `${{{0}}}` here; write `$${{{0}}}` for the text itself)")]
struct Unset(String);

/// Expand every `${VAR}` in the strings of `value`; `lookup` reads the
/// environment. The error names the key of the string.
pub(crate) fn expand(
    value: &mut Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ParseError> {
    let mut path = Vec::new();
    walk(value, &mut path, lookup).map_err(|unset| ParseError::at(&path, unset.to_string()))
}

fn walk(
    value: &mut Value,
    path: &mut Vec<String>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Unset> {
    match value {
        Value::String(s) if s.contains('$') => *s = expand_str(s, lookup)?,
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(format!("[{i}]"));
                walk(item, path, lookup)?;
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                path.push(key.clone());
                walk(item, path, lookup)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `name` is what `${…}` substitutes: `[A-Z_][A-Z0-9_]*`, as
/// OpenClaw matches (a lower-case `${name}` in a prompt stays text).
fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn expand_str(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, Unset> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
            continue;
        }
        let var = after
            .strip_prefix("${")
            .and_then(|tail| Some((tail, tail.find('}')?)))
            .filter(|(tail, end)| is_var_name(&tail[..*end]));
        match var {
            Some((tail, end)) => {
                let name = &tail[..end];
                match lookup(name) {
                    Some(v) if !v.is_empty() => out.push_str(&v),
                    _ => return Err(Unset(name.into())),
                }
                rest = &tail[end + 1..];
            }
            None => {
                out.push('$');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_expand_and_an_unset_one_is_named_at_its_key() {
        let env = |name: &str| (name == "KEY").then(|| "sk-123".to_string());
        let mut v =
            json!({"a": {"apiKey": "${KEY}", "url": "http://h/$${KEY}/$x"}, "l": ["x${KEY}y"]});
        expand(&mut v, &env).unwrap();
        assert_eq!(
            v,
            json!({"a": {"apiKey": "sk-123", "url": "http://h/${KEY}/$x"}, "l": ["xsk-123y"]})
        );
        let mut v = json!({"models": {"providers": {"o": {"apiKey": "${MISSING}"}}}});
        let e = expand(&mut v, &env).unwrap_err();
        assert_eq!(e.key, "models.providers.o.apiKey");
        assert!(e.reason.contains("`MISSING` is not set"), "{e}");
        // What is not `${UPPER_CASE}` stays text.
        let mut v = json!({"k": ["${KEY", "${}", "${name}", "a $ b"]});
        expand(&mut v, &env).unwrap();
        assert_eq!(v, json!({"k": ["${KEY", "${}", "${name}", "a $ b"]}));
        let mut v = json!({"k": ["ok", "${MISSING_2}"]});
        assert_eq!(expand(&mut v, &env).unwrap_err().key, "k[1]");
    }
}
