//! `apply_patch`: the `*** Begin Patch` format agents emit (Codex's), and
//! unified diffs. Every hunk is located by its context lines (exactly, then
//! ignoring trailing, then surrounding whitespace), all files are checked
//! before any is written, and a hunk that matches nowhere fails the whole
//! patch with the hunk it could not place.

use clawhost_agent_core::ToolError;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::files::{read_text, write_file};
use crate::spec::{blocking, Base, WorkspaceTool};
use crate::{Workspace, Workspaces};

/// One change to one file.
#[derive(Debug, PartialEq)]
enum FileChange {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

/// Lines to find (`old`: context and removed) and what replaces them.
#[derive(Debug, Default, PartialEq)]
struct Hunk {
    /// A line to find first (`@@ fn main`): the hunk matches after it.
    anchor: Option<String>,
    old: Vec<String>,
    new: Vec<String>,
}

fn parse(input: &str) -> Result<Vec<FileChange>, ToolError> {
    let input = input.trim();
    if input.starts_with("*** Begin Patch") {
        parse_codex(input)
    } else if input.starts_with("--- ") || input.starts_with("diff ") {
        parse_unified(input)
    } else {
        Err(ToolError::invalid(
            "a patch starts with `*** Begin Patch` or is a unified diff (`--- a/file`)",
        ))
    }
}

fn parse_codex(input: &str) -> Result<Vec<FileChange>, ToolError> {
    let mut lines = input.lines().skip(1).peekable();
    let mut changes = Vec::new();
    let mut ended = false;
    while let Some(line) = lines.next() {
        if line.trim() == "*** End Patch" {
            ended = true;
            break;
        }
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            let mut content = String::new();
            while let Some(l) = lines.next_if(|l| !l.starts_with("***")) {
                let added = l.strip_prefix('+').ok_or_else(|| {
                    ToolError::invalid(format!(
                        "a line of added file {path} does not start with `+`: {l}"
                    ))
                })?;
                content.push_str(added);
                content.push('\n');
            }
            changes.push(FileChange::Add {
                path: path.trim().into(),
                content,
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            changes.push(FileChange::Delete {
                path: path.trim().into(),
            });
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            let move_to = lines
                .next_if(|l| l.starts_with("*** Move to: "))
                .map(|l| l["*** Move to: ".len()..].trim().to_string());
            let mut hunks: Vec<Hunk> = Vec::new();
            while let Some(l) =
                lines.next_if(|l| !l.starts_with("*** ") || l.starts_with("*** End of File"))
            {
                if l.starts_with("*** End of File") {
                    continue;
                }
                if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    hunks.push(Hunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        ..Hunk::default()
                    });
                    continue;
                }
                if hunks.is_empty() {
                    hunks.push(Hunk::default());
                }
                if let Some(hunk) = hunks.last_mut() {
                    push_line(hunk, l).map_err(|e| e.context(path))?;
                }
            }
            changes.push(FileChange::Update {
                path: path.trim().into(),
                move_to,
                hunks,
            });
        } else if !line.trim().is_empty() {
            return Err(ToolError::invalid(format!(
                "unexpected line in the patch: {line}"
            )));
        }
    }
    if !ended {
        return Err(ToolError::invalid(
            "the patch does not end with `*** End Patch`",
        ));
    }
    Ok(changes)
}

/// Add one hunk body line (` ctx`, `-old`, `+new`; an empty line is empty context).
fn push_line(hunk: &mut Hunk, line: &str) -> Result<(), ToolError> {
    match line.chars().next() {
        None => {
            hunk.old.push(String::new());
            hunk.new.push(String::new());
        }
        Some(' ') => {
            hunk.old.push(line[1..].into());
            hunk.new.push(line[1..].into());
        }
        Some('-') => hunk.old.push(line[1..].into()),
        Some('+') => hunk.new.push(line[1..].into()),
        Some('\\') => {} // "\ No newline at end of file"
        Some(_) => {
            return Err(ToolError::invalid(format!(
                "a hunk line must start with ' ', '-' or '+': {line}"
            )))
        }
    }
    Ok(())
}

fn unified_path(header: &str) -> Option<String> {
    let path = header.split('\t').next()?.trim();
    if path == "/dev/null" {
        return None;
    }
    Some(
        path.strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .unwrap_or(path)
            .to_string(),
    )
}

fn parse_unified(input: &str) -> Result<Vec<FileChange>, ToolError> {
    let mut lines = input.lines().peekable();
    let mut changes = Vec::new();
    while let Some(line) = lines.next() {
        let Some(old) = line.strip_prefix("--- ") else {
            continue; // `diff --git`, `index …` and other headers
        };
        let new = lines
            .next()
            .and_then(|l| l.strip_prefix("+++ "))
            .ok_or_else(|| ToolError::invalid("a `--- ` line must be followed by a `+++ ` line"))?;
        let (old, new) = (unified_path(old), unified_path(new));
        let mut hunks = Vec::new();
        while let Some(l) = lines.next_if(|l| !l.starts_with("--- ") && !l.starts_with("diff ")) {
            if l.starts_with("@@") {
                hunks.push(Hunk::default());
            } else if let Some(hunk) = hunks.last_mut() {
                push_line(hunk, l)?;
            }
        }
        changes.push(match (old, new) {
            (None, Some(path)) => FileChange::Add {
                content: hunks
                    .iter()
                    .flat_map(|h| &h.new)
                    .map(|l| format!("{l}\n"))
                    .collect(),
                path,
            },
            (Some(path), None) => FileChange::Delete { path },
            (Some(from), Some(to)) => FileChange::Update {
                move_to: (from != to).then_some(to),
                path: from,
                hunks,
            },
            (None, None) => return Err(ToolError::invalid("a diff from /dev/null to /dev/null")),
        });
    }
    if changes.is_empty() {
        return Err(ToolError::invalid("the diff names no file"));
    }
    Ok(changes)
}

/// Where `old` occurs in `lines` at or after `from`: exactly, then ignoring
/// trailing whitespace, then ignoring surrounding whitespace.
fn find(lines: &[String], old: &[String], from: usize) -> Option<usize> {
    let fits: [fn(&str, &str) -> bool; 3] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
    ];
    fits.iter().find_map(|fit| {
        (from..=lines.len().checked_sub(old.len())?)
            .find(|&at| old.iter().zip(&lines[at..]).all(|(o, l)| fit(o, l)))
    })
}

fn apply_hunks(path: &str, content: &str, hunks: &[Hunk]) -> Result<String, ToolError> {
    let trailing_newline = content.ends_with('\n') || content.is_empty();
    let mut lines: Vec<String> = content.lines().map(str::to_string).collect();
    let mut cursor = 0;
    for (n, hunk) in hunks.iter().enumerate() {
        if let Some(anchor) = &hunk.anchor {
            let at = lines[cursor..]
                .iter()
                .position(|l| l.trim() == anchor.trim())
                .ok_or_else(|| {
                    ToolError::invalid(format!(
                        "{path}: hunk {} anchor `{anchor}` not found",
                        n + 1
                    ))
                })?;
            cursor += at + 1;
        }
        let at = if hunk.old.is_empty() {
            if hunk.anchor.is_some() {
                cursor
            } else {
                lines.len()
            }
        } else {
            find(&lines, &hunk.old, cursor).ok_or_else(|| {
                ToolError::invalid(format!(
                    "{path}: hunk {} does not match the file (its first line: `{}`); read the file and make the context lines exact",
                    n + 1,
                    hunk.old[0]
                ))
            })?
        };
        lines.splice(at..at + hunk.old.len(), hunk.new.iter().cloned());
        cursor = at + hunk.new.len();
    }
    let mut out = lines.join("\n");
    if trailing_newline && !lines.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// What applying a patch changed.
#[derive(Debug, Default, PartialEq)]
struct Applied {
    added: Vec<String>,
    updated: Vec<String>,
    deleted: Vec<String>,
}

fn apply(ws: &Workspace, input: &str) -> Result<Applied, ToolError> {
    let changes = parse(input)?;
    // Everything is checked (paths, hunks) before anything is written.
    let mut writes: Vec<(String, String)> = Vec::new();
    let mut removes: Vec<String> = Vec::new();
    let mut applied = Applied::default();
    for change in changes {
        match change {
            FileChange::Add { path, content } => {
                let rel = ws.relative(&path)?;
                if ws.dir().exists(&rel) {
                    return Err(ToolError::invalid(format!(
                        "{path} already exists; update it instead"
                    )));
                }
                applied.added.push(path.clone());
                writes.push((path, content));
            }
            FileChange::Delete { path } => {
                let rel = ws.relative(&path)?;
                if !ws
                    .dir()
                    .metadata(&rel)
                    .map(|m| m.is_file())
                    .unwrap_or(false)
                {
                    return Err(ToolError::invalid(format!(
                        "{path} is not a file of the workspace"
                    )));
                }
                applied.deleted.push(path.clone());
                removes.push(path);
            }
            FileChange::Update {
                path,
                move_to,
                hunks,
            } => {
                let content = read_text(ws, &path)?;
                let edited = apply_hunks(&path, &content, &hunks)?;
                match move_to {
                    Some(to) => {
                        ws.relative(&to)?;
                        applied.updated.push(format!("{path} -> {to}"));
                        removes.push(path);
                        writes.push((to, edited));
                    }
                    None => {
                        applied.updated.push(path.clone());
                        writes.push((path, edited));
                    }
                }
            }
        }
    }
    for path in removes {
        let rel = ws.relative(&path)?;
        ws.dir()
            .remove_file(&rel)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    for (path, content) in writes {
        write_file(ws, &path, &content)?;
    }
    Ok(applied)
}

/// `apply_patch`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchParams {
    /// The whole patch
    input: String,
}

/// `apply_patch`: add, update, move and delete workspace files.
pub(crate) struct ApplyPatch {
    base: Base,
}

impl ApplyPatch {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<PatchParams>(
                workspaces,
                "apply_patch",
                "Apply a patch to workspace files. Format:\n*** Begin Patch\n*** Add File: path\n+line\n*** Update File: path\n@@ optional line to find first\n context line\n-removed line\n+added line\n*** Delete File: path\n*** End Patch\nUnified diffs (--- a/x, +++ b/x, @@ … @@) are accepted too. Nothing is written unless every hunk applies.",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for ApplyPatch {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = PatchParams;

    async fn run(&self, p: PatchParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let input = p.input;
        blocking(move || {
            let applied = apply(&ws, &input)?;
            Ok(json!({
                "added": applied.added,
                "updated": applied.updated,
                "deleted": applied.deleted,
            }))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::open(tmp.path()).unwrap();
        (tmp, ws)
    }

    #[test]
    fn a_codex_patch_adds_updates_moves_and_deletes() {
        let (_tmp, ws) = ws();
        write_file(
            &ws,
            "src/main.rs",
            "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n",
        )
        .unwrap();
        write_file(&ws, "old.txt", "bye\n").unwrap();
        write_file(&ws, "a.txt", "one\ntwo\n").unwrap();
        let patch = r#"*** Begin Patch
*** Add File: docs/new.md
+# New
+text
*** Update File: src/main.rs
@@ fn main() {
-    let x = 1;
+    let x = 2;
     println!("{x}");
*** Update File: a.txt
*** Move to: b.txt
@@
 one
-two
+three
*** Delete File: old.txt
*** End Patch
"#;
        let applied = apply(&ws, patch).unwrap();
        assert_eq!(applied.added, ["docs/new.md"]);
        assert_eq!(applied.updated, ["src/main.rs", "a.txt -> b.txt"]);
        assert_eq!(applied.deleted, ["old.txt"]);
        assert_eq!(read_text(&ws, "docs/new.md").unwrap(), "# New\ntext\n");
        assert_eq!(
            read_text(&ws, "src/main.rs").unwrap(),
            "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n"
        );
        assert_eq!(read_text(&ws, "b.txt").unwrap(), "one\nthree\n");
        assert!(read_text(&ws, "a.txt").is_err() && read_text(&ws, "old.txt").is_err());
    }

    #[test]
    fn a_hunk_that_matches_nowhere_writes_nothing() {
        let (_tmp, ws) = ws();
        write_file(&ws, "a.txt", "one\ntwo\n").unwrap();
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: a.txt\n@@\n-three\n+four\n*** End Patch";
        let err = apply(&ws, patch).unwrap_err();
        assert!(
            err.to_string().contains("hunk 1 does not match") && err.to_string().contains("three"),
            "{err}"
        );
        assert!(read_text(&ws, "new.txt").is_err());
        assert_eq!(read_text(&ws, "a.txt").unwrap(), "one\ntwo\n");
        // Paths stay in the workspace.
        let out = "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch";
        assert!(matches!(apply(&ws, out), Err(ToolError::InvalidParams(m)) if m.contains("..")));
        let abs = "*** Begin Patch\n*** Delete File: /etc/hosts\n*** End Patch";
        assert!(apply(&ws, abs)
            .unwrap_err()
            .to_string()
            .contains("outside the workspace"));
        assert!(matches!(
            apply(&ws, "*** Begin Patch\n*** Add File: y\n+y\n"),
            Err(ToolError::InvalidParams(m)) if m.contains("End Patch")
        ));
    }

    #[test]
    fn a_unified_diff_applies_with_whitespace_slack() {
        let (_tmp, ws) = ws();
        write_file(&ws, "f.py", "def f():\n    return 1   \n\nprint(f())\n").unwrap();
        let diff = "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n--- /dev/null\n+++ b/g.py\n@@ -0,0 +1 @@\n+x = 1\n";
        let applied = apply(&ws, diff).unwrap();
        assert_eq!(applied.updated, ["f.py"]);
        assert_eq!(applied.added, ["g.py"]);
        assert_eq!(
            read_text(&ws, "f.py").unwrap(),
            "def f():\n    return 2\n\nprint(f())\n"
        );
        assert_eq!(read_text(&ws, "g.py").unwrap(), "x = 1\n");
    }
}
