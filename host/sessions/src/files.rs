//! Sessions in files: `<root>/<agent>/<session>.jsonl` plus
//! `<root>/<agent>/index.ndjson`. The embedded default.

use std::path::{Path, PathBuf};

use crate::backend::Backend;
use crate::entry::Header;
use crate::index::{self, IndexEntry};
use crate::transcript::{now_ms, Transcript};
use crate::SessionError;

/// The sessions of all agents under one root directory. Clones share one
/// lock over the index files, so sessions committed concurrently (the
/// gateway's many lanes) never drop each other's index rows.
#[derive(Debug, Clone)]
pub struct FileBackend {
    root: PathBuf,
    index_lock: std::sync::Arc<std::sync::Mutex<()>>,
    fsync: bool,
}

/// Check an agent or session id: 1 to 128 of `[A-Za-z0-9_-]`.
pub fn check_id(id: &str) -> Result<(), SessionError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(SessionError::BadId(id.into()))
    }
}

/// Whether a transcript was written after its index row (the row's later
/// lines were lost): its size differs from the one recorded. One `stat`.
fn written_since(dir: &Path, row: &IndexEntry) -> bool {
    let len = std::fs::metadata(dir.join(format!("{}.jsonl", row.id))).map(|m| m.len());
    row.bytes.is_none() || len.ok() != row.bytes
}

/// The ids of the transcripts in an agent's directory.
fn transcript_ids(dir: &Path) -> Result<std::collections::HashSet<String>, SessionError> {
    let read = std::fs::read_dir(dir).map_err(|e| SessionError::io(dir, e))?;
    Ok(read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".jsonl")?;
            check_id(id).ok().map(|()| id.to_string())
        })
        .collect())
}

fn row(t: &Transcript, updated_at_ms: u64) -> IndexEntry {
    IndexEntry {
        id: t.id().into(),
        created_at_ms: t.header().created_at_ms,
        updated_at_ms,
        entries: t.entries().len(),
        title: t.title(),
        runtime: t.runtime(),
        parent_session: t.header().parent_session.clone(),
        bytes: Some(t.stored()),
    }
}

impl FileBackend {
    /// Sessions under `root` (created on first write), fsynced at commits.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            index_lock: std::sync::Arc::default(),
            fsync: true,
        }
    }

    /// Whether a commit fsyncs the transcript (the default). Without it a
    /// commit only hands the entries to the kernel: a process crash loses
    /// nothing, a power loss may lose the last turns.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// Move the store at `old` (where an older version kept it) to this
    /// store's root, when the root does not exist yet and `old` does: the
    /// sessions move, nothing is copied or lost. Returns whether it moved.
    pub fn adopt(&self, old: &Path) -> Result<bool, SessionError> {
        if self.root.exists() || !old.is_dir() {
            return Ok(false);
        }
        if let Some(parent) = self.root.parent() {
            crate::private::dir(parent).map_err(|e| SessionError::io(parent, e))?;
        }
        std::fs::rename(old, &self.root).map_err(|e| SessionError::io(old, e))?;
        Ok(true)
    }

    fn agent_dir(&self, agent: &str) -> Result<PathBuf, SessionError> {
        check_id(agent)?;
        let dir = self.root.join(agent);
        crate::private::dir(&self.root).map_err(|e| SessionError::io(&self.root, e))?;
        crate::private::dir(&dir).map_err(|e| SessionError::io(&dir, e))?;
        Ok(dir)
    }

    /// The path of an existing session, without creating anything.
    fn existing(&self, agent: &str, session: &str) -> Result<PathBuf, SessionError> {
        check_id(agent)?;
        check_id(session)?;
        let path = self.root.join(agent).join(format!("{session}.jsonl"));
        if path.is_file() {
            Ok(path)
        } else {
            Err(SessionError::NotFound {
                agent: agent.into(),
                session: session.into(),
            })
        }
    }
}

impl Backend for FileBackend {
    fn create(&self, header: Header) -> Result<Transcript, SessionError> {
        check_id(&header.id)?;
        let path = self
            .agent_dir(&header.agent_id)?
            .join(format!("{}.jsonl", header.id));
        let mut t = Transcript::create(&path, header)?;
        self.commit(&mut t)?;
        Ok(t)
    }

    fn open(&self, agent: &str, session: &str, writable: bool) -> Result<Transcript, SessionError> {
        let path = self.existing(agent, session)?;
        if writable {
            Transcript::open(&path)
        } else {
            Transcript::open_read_only(&path)
        }
    }

    fn stored(&self, agent: &str, session: &str) -> Result<u64, SessionError> {
        let path = self.existing(agent, session)?;
        std::fs::metadata(&path)
            .map(|m| m.len())
            .map_err(|e| SessionError::io(&path, e))
    }

    fn commit(&self, t: &mut Transcript) -> Result<(), SessionError> {
        t.flush(self.fsync)?;
        let dir = self.agent_dir(&t.header().agent_id)?;
        let _index = clawhost_agent_core::lock(&self.index_lock);
        index::append(&dir, &row(t, now_ms())).map_err(|e| SessionError::io(&dir, e))
    }

    fn delete(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        let path = self.existing(agent, session)?;
        let dir = self.agent_dir(agent)?;
        let _index = clawhost_agent_core::lock(&self.index_lock);
        std::fs::remove_file(&path).map_err(|e| SessionError::io(&path, e))?;
        index::append_removal(&dir, session).map_err(|e| SessionError::io(&dir, e))
    }

    fn exists(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        self.existing(agent, session).map(|_| ())
    }

    /// Sessions of an agent, newest first, from the index. The index is
    /// checked against the transcripts in the directory: rows of missing
    /// files are dropped, and files without a row, or written after theirs,
    /// are read (after a crash, or when the index was lost); then it is
    /// written afresh if that changed it or it holds many superseded lines.
    fn list(&self, agent: &str) -> Result<Vec<IndexEntry>, SessionError> {
        check_id(agent)?;
        let dir = self.root.join(agent);
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let _index = clawhost_agent_core::lock(&self.index_lock);
        let (mut rows, lines) = index::read(&dir).unwrap_or_default();
        let on_disk = transcript_ids(&dir)?;
        let before = rows.len();
        rows.retain(|r| on_disk.contains(&r.id) && !written_since(&dir, r));
        let mut changed = rows.len() != before;
        let indexed: std::collections::HashSet<String> =
            rows.iter().map(|r| r.id.clone()).collect();
        for id in on_disk.iter().filter(|id| !indexed.contains(*id)) {
            let file = dir.join(format!("{id}.jsonl"));
            match Transcript::open_read_only(&file) {
                Ok(t) => {
                    let updated = t
                        .entries()
                        .last()
                        .map(|e| e.at_ms)
                        .unwrap_or(t.header().created_at_ms);
                    rows.push(row(&t, updated));
                    changed = true;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "skipping an unreadable transcript while indexing")
                }
            }
        }
        if changed || lines > 2 * rows.len() + 64 {
            if let Err(e) = index::rewrite(&dir, &rows) {
                tracing::warn!(error = %e, "could not rewrite the session index; it is rebuilt on the next listing");
            }
        }
        rows.sort_by(|a, b| {
            b.created_at_ms
                .cmp(&a.created_at_ms)
                .then_with(|| b.id.cmp(&a.id))
        });
        Ok(rows)
    }

    fn agents(&self) -> Result<Vec<String>, SessionError> {
        let Ok(read) = std::fs::read_dir(&self.root) else {
            return Ok(Vec::new());
        };
        let mut agents: Vec<String> = read
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|id| check_id(id).is_ok())
            .collect();
        agents.sort();
        Ok(agents)
    }

    fn repair(&self, agent: &str, session: &str) -> Result<Option<PathBuf>, SessionError> {
        Transcript::repair(&self.existing(agent, session)?)
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}
