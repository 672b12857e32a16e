//! The per-agent index of sessions (`index.json`), so listing reads one file.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One session in the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    /// Session id.
    pub id: String,
    /// Creation time (ms since the epoch).
    pub created_at_ms: u64,
    /// Last write (ms since the epoch).
    pub updated_at_ms: u64,
    /// Entries in the file.
    pub entries: usize,
    /// The first user message, shortened.
    pub title: String,
    /// Runtime owning the session.
    pub runtime: Option<String>,
    /// Parent session (forks).
    pub parent_session: Option<String>,
}

/// Read an index; a missing or unreadable one reads as `None`.
pub(crate) fn read(path: &Path) -> Option<Vec<IndexEntry>> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Write an index atomically (temp file + rename).
pub(crate) fn write(path: &Path, entries: &[IndexEntry]) -> std::io::Result<()> {
    let dir = path.parent().expect("index has a parent dir");
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(&mut tmp, entries)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
