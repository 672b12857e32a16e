//! Editing a configuration file in place: one key set or removed, the rest of
//! the text (comments, key order, quoting, trailing commas) kept as written.
//! An edit is checked as a whole config before the file is replaced, and the
//! file is replaced atomically (a sibling temporary file, then a rename).

use std::io::Write;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::Value;

use crate::Config;

/// Why an edit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON5 this editor can keep intact.
    #[error("{path}: {reason}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        reason: String,
    },
    /// The key is malformed or runs through a value that is not an object or array.
    #[error("`{key}`: {reason}")]
    Key {
        /// The dotted key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The edited file would not be a valid config; nothing was written.
    #[error("not written, the result would be invalid: {0}")]
    Invalid(#[from] crate::ConfigError),
}

/// One segment of a dotted key: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Split `a.b[0].c` into segments.
fn segments(key: &str) -> Result<Vec<Segment>, EditError> {
    let bad = |reason: &str| EditError::Key {
        key: key.into(),
        reason: reason.into(),
    };
    let mut out = Vec::new();
    for part in key.split('.') {
        let (name, rest) = match part.split_once('[') {
            Some((name, rest)) => (name, Some(rest)),
            None => (part, None),
        };
        if name.is_empty() && (out.is_empty() || rest.is_none()) {
            return Err(bad("empty key segment"));
        }
        if !name.is_empty() {
            out.push(Segment::Key(name.into()));
        }
        if let Some(rest) = rest {
            let rest = rest.strip_suffix(']').ok_or_else(|| bad("unclosed `[`"))?;
            for index in rest.split("][") {
                out.push(Segment::Index(
                    index
                        .parse()
                        .map_err(|_| bad("an index must be a number"))?,
                ));
            }
        }
    }
    if out.is_empty() {
        return Err(bad("empty key"));
    }
    Ok(out)
}

/// A JSON value as the editor's input.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// A config file open for editing.
pub struct ConfigFile {
    path: PathBuf,
    root: CstRootNode,
}

impl ConfigFile {
    /// Open `path`; a file that does not exist yet starts as `{}`.
    pub fn open(path: &Path) -> Result<Self, EditError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "{\n}\n".into(),
            Err(source) => {
                return Err(EditError::Io {
                    path: path.into(),
                    source,
                })
            }
        };
        Self::parse(path, &text)
    }

    /// Edit `text` as the content of `path` (nothing is read).
    pub fn parse(path: &Path, text: &str) -> Result<Self, EditError> {
        let root = CstRootNode::parse(text, &crate::json_text::options()).map_err(|e| {
            EditError::Syntax {
                path: path.into(),
                reason: e.to_string(),
            }
        })?;
        if root.value().is_some() && root.object_value().is_none() {
            return Err(EditError::Syntax {
                path: path.into(),
                reason: "the configuration must be a JSON object".into(),
            });
        }
        Ok(Self {
            path: path.into(),
            root,
        })
    }

    /// The file's text as edited so far.
    pub fn text(&self) -> String {
        self.root.to_string()
    }

    /// The node at `path`, if the file has one there.
    fn node_at(&self, path: &[Segment]) -> Option<CstNode> {
        let mut node = self.root.value();
        for segment in path {
            let n = node?;
            node = match segment {
                Segment::Key(k) => n.as_object()?.get(k)?.value(),
                Segment::Index(i) => n.as_array()?.elements().get(*i).cloned(),
            };
        }
        node
    }

    /// The value at `key`, as written (`${VAR}`s unexpanded).
    pub fn get(&self, key: &str) -> Result<Option<Value>, EditError> {
        Ok(self
            .node_at(&segments(key)?)
            .and_then(|n| n.to_serde_value()))
    }

    /// Set `key` to `value`, creating the objects on the way; an index may
    /// name an element or the position just past the last one (an append).
    pub fn set(&mut self, key: &str, value: &Value) -> Result<(), EditError> {
        let path = segments(key)?;
        let bad = |reason: String| EditError::Key {
            key: key.into(),
            reason,
        };
        let Some((last, parents)) = path.split_last() else {
            return Err(bad("an empty key".into()));
        };
        let mut container = Container::Object(self.root.object_value_or_set());
        for (depth, segment) in parents.iter().enumerate() {
            let next_is_index = matches!(path[depth + 1], Segment::Index(_));
            container = match (container, segment) {
                (Container::Object(o), Segment::Key(k)) => {
                    let existing = o.get(k).and_then(|p| p.value());
                    match existing {
                        Some(n) => match (n.as_object(), n.as_array()) {
                            (Some(o), _) => Container::Object(o),
                            (None, Some(a)) => Container::Array(a),
                            (None, None) => {
                                return Err(bad(format!(
                                    "`{k}` holds a value that is not an object or array"
                                )))
                            }
                        },
                        None if next_is_index => Container::Array(o.array_value_or_set(k)),
                        None => Container::Object(o.object_value_or_set(k)),
                    }
                }
                (Container::Array(a), Segment::Index(i)) => {
                    let element =
                        a.elements().get(*i).cloned().ok_or_else(|| {
                            bad(format!("index {i} is past the end of its array"))
                        })?;
                    if let Some(o) = element.as_object() {
                        Container::Object(o)
                    } else if let Some(a) = element.as_array() {
                        Container::Array(a)
                    } else {
                        return Err(bad(format!("element {i} is not an object or array")));
                    }
                }
                (container, segment) => return Err(bad(mismatch(&container, segment))),
            };
        }
        match (container, last) {
            (Container::Object(o), Segment::Key(k)) => match o.get(k) {
                Some(prop) => prop.set_value(input(value)),
                None => {
                    o.append(k, input(value));
                }
            },
            (Container::Array(a), Segment::Index(i)) => {
                let elements = a.elements();
                if *i == elements.len() {
                    a.append(input(value));
                } else if let Some(old) = elements.get(*i).cloned() {
                    old.remove();
                    a.insert(*i, input(value));
                } else {
                    return Err(bad(format!("index {i} is past the end of its array")));
                }
            }
            (container, segment) => return Err(bad(mismatch(&container, segment))),
        }
        Ok(())
    }

    /// Remove `key`; whether it was there.
    pub fn remove(&mut self, key: &str) -> Result<bool, EditError> {
        let path = segments(key)?;
        let Some((last, parents)) = path.split_last() else {
            return Ok(false);
        };
        let Some(node) = self.node_at(parents) else {
            return Ok(false);
        };
        let removed = match last {
            Segment::Key(k) => node.as_object().and_then(|o| o.get(k)).map(|p| p.remove()),
            Segment::Index(i) => node
                .as_array()
                .and_then(|a| a.elements().get(*i).cloned())
                .map(|e| e.remove()),
        };
        Ok(removed.is_some())
    }

    /// Check the edited text as a whole config (types, keys, paths; every
    /// `${VAR}` counts as set, so an edit never needs the secrets), then
    /// replace the file atomically, keeping its permissions.
    pub fn save(&self) -> Result<(), EditError> {
        let text = self.text();
        let base = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let io = |source| EditError::Io {
            path: self.path.clone(),
            source,
        };
        let config = Config::from_text_with_env(&text, &base, &|_| Some("set".into())).map_err(
            |source| crate::ConfigError::Parse {
                path: self.path.clone(),
                source,
            },
        )?;
        config.check().map_err(|e| crate::ConfigError::Invalid {
            path: self.path.clone(),
            key: e.key,
            reason: e.reason,
        })?;
        let mut file = tempfile::NamedTempFile::new_in(&base).map_err(io)?;
        if let Ok(meta) = std::fs::metadata(&self.path) {
            file.as_file()
                .set_permissions(meta.permissions())
                .map_err(io)?;
        }
        file.write_all(text.as_bytes()).map_err(io)?;
        file.as_file().sync_all().map_err(io)?;
        file.persist(&self.path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

/// Where [`ConfigFile::set`] is in the tree.
enum Container {
    Object(CstObject),
    Array(jsonc_parser::cst::CstArray),
}

/// Why `segment` cannot step into `container`.
fn mismatch(container: &Container, segment: &Segment) -> String {
    match (container, segment) {
        (Container::Object(_), Segment::Index(i)) => format!("[{i}] indexes an object"),
        (Container::Array(_), Segment::Key(k)) => format!("`{k}` names a key of an array"),
        _ => "the key does not fit the file".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TEXT: &str = "{\n  // the plugins\n  plugins: {\n    paths: ['./p'], // here\n    entries: {},\n  },\n}\n";

    fn open(text: &str) -> ConfigFile {
        ConfigFile::parse(Path::new("/nowhere/clawhost.json5"), text).unwrap()
    }

    #[test]
    fn a_set_keeps_comments_quoting_and_trailing_commas() {
        let mut file = open(TEXT);
        file.set("plugins.entries.x.enabled", &json!(false))
            .unwrap();
        file.set("agents.defaults.model", &json!("openai/gpt-4.1"))
            .unwrap();
        let text = file.text();
        assert!(
            text.contains("// the plugins") && text.contains("// here"),
            "{text}"
        );
        assert!(text.contains("paths: ['./p']"), "{text}");
        let value: Value = crate::json_text::read(&text).unwrap();
        assert_eq!(value["plugins"]["entries"]["x"]["enabled"], json!(false));
        assert_eq!(
            value["agents"]["defaults"]["model"],
            json!("openai/gpt-4.1")
        );
        assert_eq!(file.get("plugins.paths[0]").unwrap(), Some(json!("./p")));
    }

    #[test]
    fn indexes_replace_or_append_and_removal_reports_what_it_found() {
        let mut file = open(TEXT);
        file.set("plugins.paths[0]", &json!("./q")).unwrap();
        file.set("plugins.paths[1]", &json!("./r")).unwrap();
        assert_eq!(
            file.get("plugins.paths").unwrap(),
            Some(json!(["./q", "./r"]))
        );
        assert!(file.set("plugins.paths[5]", &json!("x")).is_err());
        file.set("plugins.allow[0]", &json!("a")).unwrap();
        assert_eq!(file.get("plugins.allow").unwrap(), Some(json!(["a"])));
        assert!(file.remove("plugins.paths[0]").unwrap());
        assert!(!file.remove("plugins.nothing").unwrap());
        assert_eq!(file.get("plugins.paths").unwrap(), Some(json!(["./r"])));
    }

    #[test]
    fn bad_keys_and_paths_through_scalars_are_refused() {
        let mut file = open(TEXT);
        for key in [
            "",
            "a..b",
            "a[",
            "a[x]",
            "plugins.paths.x",
            "plugins.entries[0]",
        ] {
            assert!(file.set(key, &json!(1)).is_err(), "{key}");
        }
        assert_eq!(segments("a.b[0][1].c").unwrap().len(), 5);
    }

    #[test]
    fn an_invalid_result_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json5");
        std::fs::write(&path, "{ /* keep */ }\n").unwrap();
        let mut file = ConfigFile::open(&path).unwrap();
        file.set("plugins.limits.memoryMb", &json!("lots")).unwrap();
        let err = file.save().unwrap_err().to_string();
        assert!(err.contains("plugins.limits.memoryMb"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ /* keep */ }\n");
        let mut file = ConfigFile::open(&path).unwrap();
        file.set("plugins.limits.memoryMb", &json!(32)).unwrap();
        file.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("/* keep */") && text.contains("32"), "{text}");
    }
}
