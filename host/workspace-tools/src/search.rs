//! `find` (globs) and `grep` (regular expressions) over the workspace,
//! honouring `.gitignore` (the `ignore` crate) and never following symlinks.

use clawhost_agent_core::ToolError;
use std::path::Path;
use std::sync::Arc;

use globset::GlobBuilder;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::spec::{blocking, Base, WorkspaceTool};
use crate::{Workspace, Workspaces};

/// Most paths `find` returns.
const MAX_FOUND: usize = 1000;
/// Most matching lines `grep` returns.
const MAX_MATCHES: usize = 500;
/// Longest matching line `grep` returns (characters).
const MAX_MATCH_CHARS: usize = 500;

/// Files under `path` in `ws` (gitignored and hidden files skipped,
/// symlinks not followed), as (workspace-relative path, real path).
fn walk(
    ws: &Workspace,
    path: &str,
) -> Result<impl Iterator<Item = (String, std::path::PathBuf)>, ToolError> {
    let rel = ws.relative(path)?;
    let start = ws.real_dir(&rel)?;
    let root = ws.root().to_path_buf();
    let walker = WalkBuilder::new(start)
        .follow_links(false)
        .require_git(false)
        .build();
    Ok(walker.filter_map(Result::ok).filter_map(move |entry| {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let shown = entry
            .path()
            .strip_prefix(&root)
            .ok()?
            .to_string_lossy()
            .into_owned();
        Some((shown, entry.into_path()))
    }))
}

/// A glob matcher: a pattern without `/` matches a file name at any depth.
fn glob(pattern: &str) -> Result<globset::GlobMatcher, ToolError> {
    let pattern = if pattern.contains('/') {
        pattern.to_string()
    } else {
        format!("**/{pattern}")
    };
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::invalid(format!("bad glob: {e}")))
}

/// `find`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindParams {
    /// Glob; without `/` it matches file names at any depth
    pattern: String,
    /// Directory to search (default: the workspace root)
    #[serde(default)]
    path: String,
}

/// `grep`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepParams {
    /// Regular expression
    #[schemars(length(min = 1))]
    pattern: String,
    /// Directory to search (default: the workspace root)
    #[serde(default)]
    path: String,
    /// Only files matching this glob
    glob: Option<String>,
    /// Match without regard to case (default false)
    #[serde(default)]
    ignore_case: bool,
}

/// `find`: workspace files whose path matches a glob.
pub(crate) struct Find {
    base: Base,
}

impl Find {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<FindParams>(
                workspaces,
                "find",
                "Find workspace files by glob (`*.rs`, `src/**/test_*.py`); .gitignored and hidden files are skipped.",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for Find {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = FindParams;

    async fn run(&self, p: FindParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let FindParams { pattern, path } = p;
        blocking(move || {
            let matcher = glob(&pattern)?;
            let mut found: Vec<String> = Vec::new();
            let mut truncated = false;
            for (shown, _) in walk(&ws, &path)? {
                if matcher.is_match(Path::new(&shown)) {
                    if found.len() == MAX_FOUND {
                        truncated = true;
                        break;
                    }
                    found.push(shown);
                }
            }
            found.sort();
            Ok(json!({"files": found, "truncated": truncated}))
        })
        .await
    }
}

/// `grep`: lines of workspace files matching a regular expression.
pub(crate) struct Grep {
    base: Base,
}

impl Grep {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<GrepParams>(
                workspaces,
                "grep",
                "Search workspace files for a regular expression (Rust regex syntax); returns `path:line: text`. Binary, .gitignored and hidden files are skipped.",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for Grep {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = GrepParams;

    async fn run(&self, p: GrepParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let GrepParams {
            pattern,
            path,
            glob: only,
            ignore_case,
        } = p;
        let only = only.as_deref().map(glob).transpose()?;
        blocking(move || {
            let matcher = RegexMatcherBuilder::new()
                .case_insensitive(ignore_case)
                .size_limit(1 << 20)
                .build(&pattern)
                .map_err(|e| ToolError::invalid(format!("bad regular expression: {e}")))?;
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .build();
            let mut matches: Vec<String> = Vec::new();
            let mut truncated = false;
            for (shown, real) in walk(&ws, &path)? {
                if only
                    .as_ref()
                    .is_some_and(|g| !g.is_match(Path::new(&shown)))
                {
                    continue;
                }
                let sink = UTF8(|line_number, line| {
                    if matches.len() == MAX_MATCHES {
                        truncated = true;
                        return Ok(false);
                    }
                    let line: String = line.trim_end().chars().take(MAX_MATCH_CHARS).collect();
                    matches.push(format!("{shown}:{line_number}: {line}"));
                    Ok(true)
                });
                // An unreadable or non-UTF-8 file is skipped, not fatal.
                let _ = searcher.search_path(&matcher, &real, sink);
                if truncated {
                    break;
                }
            }
            Ok(json!({"matches": matches, "truncated": truncated}))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::write_file;

    #[test]
    fn walks_skip_ignored_files_and_symlinks_out() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::open(tmp.path()).unwrap();
        write_file(&ws, ".gitignore", "target/\n").unwrap();
        write_file(&ws, "src/lib.rs", "x").unwrap();
        write_file(&ws, "target/out.rs", "x").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.root().join("link")).unwrap();
        let files: Vec<String> = walk(&ws, "").unwrap().map(|(s, _)| s).collect();
        assert_eq!(files, ["src/lib.rs"]);
        assert!(walk(&ws, "link").is_err());
        assert!(glob("*.rs").unwrap().is_match("src/lib.rs"));
        assert!(!glob("src/*.rs").unwrap().is_match("src/a/b.rs"));
    }
}
