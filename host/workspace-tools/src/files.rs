//! `read`, `write` and `ls`.

use clawhost_agent_core::ToolError;
use std::io::{BufRead, BufReader, Read as _};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::spec::{blocking, Base, WorkspaceTool};
use crate::{Workspace, Workspaces};

/// Lines `read` returns when no limit is given.
const DEFAULT_LIMIT: u64 = 2000;
/// Longest line `read` returns (in characters; the rest is cut).
const MAX_LINE_CHARS: usize = 2000;
/// Most text one `read` returns.
const MAX_READ_OUTPUT: usize = 256 << 10;
/// Bytes looked at for a NUL to call a file binary.
const BINARY_SNIFF: usize = 8192;
/// Largest file `write` writes.
pub(crate) const MAX_WRITE: usize = 8 << 20;
/// Most entries `ls` lists.
const MAX_ENTRIES: usize = 1000;

/// `read`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadParams {
    /// File path, relative to the workspace
    path: String,
    /// First line to return (1-based)
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// Most lines to return (default 2000)
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

/// `write`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteParams {
    /// File path, relative to the workspace
    path: String,
    /// The whole new content
    content: String,
}

/// `ls`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LsParams {
    /// Directory, relative to the workspace (default: its root)
    #[serde(default)]
    path: String,
}

/// `read`: a file's lines, numbered, from `offset` (1-based), at most `limit`.
pub(crate) struct Read {
    base: Base,
}

impl Read {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<ReadParams>(
                workspaces,
                "read",
                "Read a file in the workspace. Text comes in numbered lines (`N\\tline`); use offset and limit for long files. Images (PNG, JPEG, GIF, WebP) come back as images. Other binary files are refused.",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for Read {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = ReadParams;

    async fn run(&self, p: ReadParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let offset = p.offset.unwrap_or(1).max(1);
        let limit = p.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        blocking(move || read_lines(&ws, &p.path, offset, limit)).await
    }
}

fn read_lines(ws: &Workspace, path: &str, offset: u64, limit: u64) -> Result<Value, ToolError> {
    let rel = ws.relative(path)?;
    let file = ws.dir().open(&rel).map_err(|e| format!("{path}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{path}: {e}"))?;
    if meta.is_dir() {
        return Err(ToolError::invalid(format!("{path} is a directory; use ls")));
    }
    let mut reader = BufReader::new(file);
    let head = reader.fill_buf().map_err(|e| format!("{path}: {e}"))?;
    if let Some(media_type) = clawhost_agent_core::sniff_image(head) {
        return read_image(reader, path, media_type, meta.len());
    }
    if head[..head.len().min(BINARY_SNIFF)].contains(&0) {
        return Err(format!("{path} is a binary file ({} bytes); not shown", meta.len()).into());
    }
    let mut content = String::new();
    let (mut number, mut shown, mut truncated) = (0u64, 0u64, false);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("{path}: {e}"))?
            == 0
        {
            break;
        }
        number += 1;
        if number < offset || truncated {
            continue;
        }
        if shown == limit || content.len() >= MAX_READ_OUTPUT {
            truncated = true;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
        content.push_str(&format!("{number}\t{cut}\n"));
        shown += 1;
    }
    Ok(json!({
        "path": path,
        "content": content,
        "from": offset,
        "lines": shown,
        "totalLines": number,
        "truncated": truncated,
    }))
}

/// An image file as the content shape the dispatcher turns into an image
/// for the model (the type is read from the bytes, as for every image).
fn read_image(
    reader: impl std::io::Read,
    path: &str,
    media_type: &str,
    len: u64,
) -> Result<Value, ToolError> {
    use clawhost_agent_core::{Image, MAX_IMAGE_BYTES};
    if len > MAX_IMAGE_BYTES as u64 {
        return Err(format!(
            "{path} is an image ({media_type}) of {len} bytes; at most {MAX_IMAGE_BYTES} can be shown"
        ).into());
    }
    let mut bytes = Vec::new();
    reader
        .take(MAX_IMAGE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    let image = Image::from_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let Image::Base64 { media_type, data } = image else {
        return Err(format!("{path}: not an inline image").into());
    };
    Ok(json!({
        "content": [
            {"type": "text", "text": format!("Read image file {path} [{media_type}, {} bytes]", bytes.len())},
            {"type": "image", "data": data, "mimeType": media_type},
        ]
    }))
}

/// `write`: create or replace a file (parent directories are created).
pub(crate) struct Write {
    base: Base,
}

impl Write {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<WriteParams>(
                workspaces,
                "write",
                "Create or overwrite a file in the workspace with the given content (parent directories are created).",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for Write {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = WriteParams;

    async fn run(&self, p: WriteParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let WriteParams { path, content } = p;
        blocking(move || {
            let bytes = write_file(&ws, &path, &content)?;
            Ok(json!({"path": path, "bytes": bytes}))
        })
        .await
    }
}

/// Write `content` to `path` in `ws`, creating parent directories.
pub(crate) fn write_file(ws: &Workspace, path: &str, content: &str) -> Result<usize, ToolError> {
    if content.len() > MAX_WRITE {
        return Err(ToolError::invalid(format!(
            "{path}: {} bytes is over the limit of {MAX_WRITE} bytes",
            content.len()
        )));
    }
    let rel = ws.relative(path)?;
    if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        ws.dir()
            .create_dir_all(parent)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    ws.dir()
        .write(&rel, content)
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(content.len())
}

/// Read `path` in `ws` as UTF-8 text (at most [`MAX_WRITE`] bytes).
pub(crate) fn read_text(ws: &Workspace, path: &str) -> Result<String, ToolError> {
    let rel = ws.relative(path)?;
    let file = ws.dir().open(&rel).map_err(|e| format!("{path}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_WRITE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() > MAX_WRITE {
        return Err(format!("{path} is over {MAX_WRITE} bytes").into());
    }
    String::from_utf8(bytes).map_err(|_| ToolError::invalid(format!("{path} is not UTF-8 text")))
}

/// `ls`: a directory's entries.
pub(crate) struct Ls {
    base: Base,
}

impl Ls {
    pub(crate) fn new(workspaces: Arc<Workspaces>) -> Self {
        Self {
            base: Base::new::<LsParams>(
                workspaces,
                "ls",
                "List a directory of the workspace: name, type and size of each entry.",
            ),
        }
    }
}

#[async_trait::async_trait]
impl WorkspaceTool for Ls {
    fn base(&self) -> &Base {
        &self.base
    }

    type Params = LsParams;

    async fn run(&self, p: LsParams, ws: Arc<Workspace>) -> Result<Value, ToolError> {
        let path = p.path;
        blocking(move || {
            let rel = ws.relative(&path)?;
            let dir = ws
                .dir()
                .open_dir(&rel)
                .map_err(|e| format!("{path}: {e}"))?;
            let mut entries = Vec::new();
            for entry in dir.entries().map_err(|e| format!("{path}: {e}"))? {
                let entry = entry.map_err(|e| format!("{path}: {e}"))?;
                let kind = entry.file_type().map_err(|e| e.to_string())?;
                let kind = if kind.is_dir() {
                    "dir"
                } else if kind.is_file() {
                    "file"
                } else if kind.is_symlink() {
                    "symlink"
                } else {
                    "other"
                };
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                entries.push((entry.file_name().to_string_lossy().into_owned(), kind, size));
            }
            entries.sort();
            let truncated = entries.len() > MAX_ENTRIES;
            let listed: Vec<Value> = entries
                .into_iter()
                .take(MAX_ENTRIES)
                .map(|(name, kind, size)| json!({"name": name, "type": kind, "size": size}))
                .collect();
            Ok(json!({"path": path, "entries": listed, "truncated": truncated}))
        })
        .await
    }
}
