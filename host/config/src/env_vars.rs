//! `${VAR}` in configuration strings: replaced by the environment variable
//! (for secrets such as API keys), `$${` writes a literal `${`. An unset or
//! empty variable is an error naming the key and the variable, never a
//! literal `${VAR}` sent to a provider.

use serde_json::Value;

/// Expand every `${VAR}` in the strings of `value`; `lookup` reads the
/// environment. The error is (key path, reason).
pub(crate) fn expand(
    value: &mut Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), (String, String)> {
    let mut path = Vec::new();
    walk(value, &mut path, lookup).map_err(|reason| (path.join("."), reason))
}

fn walk(
    value: &mut Value,
    path: &mut Vec<String>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
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

fn expand_str(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let end = tail.find('}').ok_or_else(|| {
                "`${` without a closing `}` (write `$${` for a literal `${`)".to_string()
            })?;
            let name = &tail[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "`${{{name}}}` is not a variable name (letters, digits, `_`)"
                ));
            }
            match lookup(name) {
                Some(v) if !v.is_empty() => out.push_str(&v),
                _ => {
                    return Err(format!(
                    "environment variable `{name}` is not set (the config uses `${{{name}}}` here)"
                ))
                }
            }
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = &after[1..];
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
        let (key, reason) = expand(&mut v, &env).unwrap_err();
        assert_eq!(key, "models.providers.o.apiKey");
        assert!(reason.contains("`MISSING` is not set"), "{reason}");
        let mut v = json!({"k": ["${KEY", "${}"]});
        let (key, _) = expand(&mut v, &env).unwrap_err();
        assert_eq!(key, "k.[0]");
    }
}
