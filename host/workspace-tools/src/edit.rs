//! `edit`: exact search and replace in one file.

use clawhost_agent_core::ToolError;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::files::{read_text, write_file};
use crate::spec::{blocking, Base, WorkspaceTool};
use crate::{Workspace, Workspaces};

/// `edit`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditParams {
    /// File path, relative to the workspace
    path: String,
    /// The exact text to replace
    #[schemars(length(min = 1))]
    old_string: String,
    /// The text to put in its place
    new_string: String,
    /// Replace every occurrence (default false)
    #[serde(default)]
    replace_all: bool,
}

/// `edit`: replace `old_string` by `new_string`; it must occur exactly once
/// unless `replace_all` is set.
pub(crate) struct Edit {
    base: Base,
}

impl Edit {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<EditParams>(
                workspaces,
                "edit",
                "Replace an exact piece of text in a workspace file. old_string must occur exactly once (give enough surrounding lines to make it unique) unless replace_all is true.",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for Edit {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = EditParams;

    async fn run(&self, p: EditParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let EditParams {
            path,
            old_string: old,
            new_string: new,
            replace_all: all,
        } = p;
        blocking(move || {
            let replacements = edit_file(&ws, &path, &old, &new, all)?;
            Ok(json!({"path": path, "replacements": replacements}))
        })
        .await
    }
}

fn edit_file(
    ws: &Workspace,
    path: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<usize, ToolError> {
    if old.is_empty() {
        return Err(ToolError::invalid("old_string is empty"));
    }
    let content = read_text(ws, path)?;
    let count = content.matches(old).count();
    match (count, all) {
        (0, _) => {
            return Err(ToolError::invalid(format!(
                "old_string was not found in {path}; read the file and copy the text exactly (whitespace included)"
            )))
        }
        (n, false) if n > 1 => {
            return Err(ToolError::invalid(format!(
                "old_string occurs {n} times in {path}; include more surrounding lines to make it unique, or set replace_all"
            )))
        }
        _ => {}
    }
    let edited = if all {
        content.replace(old, new)
    } else {
        content.replacen(old, new, 1)
    };
    write_file(ws, path, &edited)?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_needs_exactly_one_match_unless_all_are_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::open(tmp.path()).unwrap();
        write_file(&ws, "f.txt", "a b a").unwrap();
        let none = edit_file(&ws, "f.txt", "c", "d", false).unwrap_err();
        assert!(
            matches!(&none, ToolError::InvalidParams(m) if m.contains("not found")),
            "{none:?}"
        );
        let two = edit_file(&ws, "f.txt", "a", "x", false).unwrap_err();
        assert!(two.to_string().contains("occurs 2 times"), "{two}");
        assert_eq!(read_text(&ws, "f.txt").unwrap(), "a b a");
        assert_eq!(edit_file(&ws, "f.txt", "b", "y", false), Ok(1));
        assert_eq!(edit_file(&ws, "f.txt", "a", "z", true), Ok(2));
        assert_eq!(read_text(&ws, "f.txt").unwrap(), "z y z");
    }
}
