//! The per-agent index of sessions (`index.ndjson`), so listing reads one
//! file and a commit appends one line.

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
    /// The transcript's size when this row was written (a listing re-reads
    /// a transcript whose size differs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// The index file of an agent's directory: one JSON line per update of a
/// session's row, the latest line of an id winning (`{"id", "deleted": true}`
/// removes one). A commit appends one line instead of rewriting the file.
pub(crate) const FILE: &str = "index.ndjson";

/// A line of the index: a row, or the removal of one.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Removed { id: String, deleted: bool },
    Row(IndexEntry),
}

/// The rows of an index and how many lines held them; a missing file reads
/// as `None`. Lines that do not parse (a torn last line) are skipped: the
/// index is derived data, checked against the transcripts on every listing.
pub(crate) fn read(dir: &Path) -> Option<(Vec<IndexEntry>, usize)> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    let mut rows: Vec<IndexEntry> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut lines = 0;
    for line in text.lines() {
        lines += 1;
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Row(row)) => match at.get(&row.id) {
                Some(&i) => rows[i] = row,
                None => {
                    at.insert(row.id.clone(), rows.len());
                    rows.push(row);
                }
            },
            Ok(Line::Removed { id, deleted: true }) => {
                if let Some(i) = at.remove(&id) {
                    rows.remove(i);
                    at = rows
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (r.id.clone(), i))
                        .collect();
                }
            }
            Ok(Line::Removed { .. }) | Err(_) => {}
        }
    }
    Some((rows, lines))
}

/// Append one row (its latest state) to the index.
pub(crate) fn append(dir: &Path, row: &IndexEntry) -> std::io::Result<()> {
    append_line(dir, serde_json::to_string(row)?)
}

/// Append the removal of a row.
pub(crate) fn append_removal(dir: &Path, id: &str) -> std::io::Result<()> {
    append_line(
        dir,
        serde_json::to_string(&Line::Removed {
            id: id.into(),
            deleted: true,
        })?,
    )
}

fn append_line(dir: &Path, mut line: String) -> std::io::Result<()> {
    use std::io::Write;
    line.push('\n');
    let mut file = crate::private::file_options()
        .create(true)
        .append(true)
        .open(dir.join(FILE))?;
    crate::private::tighten(&file)?;
    file.write_all(line.as_bytes())
}

/// Write the index afresh, one line per row (temp file + rename). Not
/// fsynced: a crash can at worst lose recent lines, which the next listing
/// finds missing against the transcripts and rebuilds.
pub(crate) fn rewrite(dir: &Path, rows: &[IndexEntry]) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        for row in rows {
            serde_json::to_writer(&mut out, row)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    tmp.persist(dir.join(FILE)).map_err(|e| e.error)?;
    Ok(())
}
