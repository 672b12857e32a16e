//! Where sessions live: `<root>/<agent>/<session>.jsonl` plus `<root>/<agent>/index.ndjson`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::entry::{EntryBody, Header, TRANSCRIPT_VERSION};
use crate::index::{self, IndexEntry};
use crate::transcript::{now_ms, Transcript};

/// Session storage errors.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line (other than a torn last one) does not parse.
    #[error("{path}:{line}: corrupt transcript: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Line number (1-based).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The last line is torn (an interrupted write); appending would bury it.
    #[error("{path}:{line}: the last line is torn ({reason}); run `clawhost sessions repair` to cut it off (a backup is kept)")]
    NeedsRepair {
        /// The file.
        path: PathBuf,
        /// Line number (1-based).
        line: usize,
        /// Why it does not parse.
        reason: String,
    },
    /// A write to a transcript opened read-only.
    #[error("{path}: opened read-only")]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// No such session.
    #[error("no session `{session}` for agent `{agent}`")]
    NotFound {
        /// Agent.
        agent: String,
        /// Session.
        session: String,
    },
    /// No such entry.
    #[error("session `{session}` has no entry `{entry}`")]
    NoEntry {
        /// Session.
        session: String,
        /// Entry.
        entry: String,
    },
    /// An id with characters outside `[A-Za-z0-9_-]`.
    #[error("`{0}` is not a valid agent or session id")]
    BadId(String),
}

impl SessionError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        SessionError::Io {
            path: path.into(),
            source,
        }
    }
}

/// The session store of all agents under one root directory. Clones share
/// one lock over the index files, so sessions committed concurrently (the
/// gateway's many lanes) never drop each other's index rows.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
    index_lock: std::sync::Arc<std::sync::Mutex<()>>,
    fsync: bool,
    /// Transcripts kept open between turns, so a turn does not re-read its
    /// session's whole file.
    open: std::sync::Arc<std::sync::Mutex<HashMap<(String, String), Transcript>>>,
}

/// How many transcripts a store keeps open between turns (each holds a file
/// handle and its entries).
const KEPT_OPEN: usize = 256;

fn check_id(id: &str) -> Result<(), SessionError> {
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

fn title(t: &Transcript) -> String {
    t.entries()
        .iter()
        .find_map(|e| match e.body.message() {
            Some(clawhost_agent_core::Message::User { text, .. }) => {
                Some(text.chars().take(60).collect())
            }
            _ => None,
        })
        .unwrap_or_default()
}

fn row(t: &Transcript, updated_at_ms: u64) -> IndexEntry {
    IndexEntry {
        id: t.id().into(),
        created_at_ms: t.header().created_at_ms,
        updated_at_ms,
        entries: t.entries().len(),
        title: title(t),
        runtime: t.runtime(),
        parent_session: t.header().parent_session.clone(),
        bytes: std::fs::metadata(t.path()).map(|m| m.len()).ok(),
    }
}

impl SessionStore {
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

    /// A store rooted at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            index_lock: std::sync::Arc::default(),
            fsync: true,
            open: std::sync::Arc::default(),
        }
    }

    /// Whether a commit fsyncs the transcript (the default). Without it a
    /// commit only hands the entries to the kernel: a process crash loses
    /// nothing, a power loss may lose the last turns.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    fn agent_dir(&self, agent: &str) -> Result<PathBuf, SessionError> {
        check_id(agent)?;
        let dir = self.root.join(agent);
        crate::private::dir(&self.root).map_err(|e| SessionError::io(&self.root, e))?;
        crate::private::dir(&dir).map_err(|e| SessionError::io(&dir, e))?;
        Ok(dir)
    }

    fn path(&self, agent: &str, session: &str) -> Result<PathBuf, SessionError> {
        check_id(session)?;
        Ok(self.agent_dir(agent)?.join(format!("{session}.jsonl")))
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

    /// Start a new session (fresh id) for an agent.
    pub fn create(&self, agent: &str, parent: Option<&str>) -> Result<Transcript, SessionError> {
        let id = format!("{}-{:06x}", now_ms(), fastrand::u32(..) & 0xff_ffff);
        let header = Header {
            kind: "session".into(),
            version: TRANSCRIPT_VERSION,
            id: id.clone(),
            agent_id: agent.into(),
            created_at_ms: now_ms(),
            cwd: std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            parent_session: parent.map(Into::into),
        };
        let mut t = Transcript::create(&self.path(agent, &id)?, header)?;
        self.commit(agent, &mut t)?;
        Ok(t)
    }

    /// Open an existing session to continue it (refused while its last
    /// line is torn: see [`SessionStore::repair`]).
    pub fn open(&self, agent: &str, session: &str) -> Result<Transcript, SessionError> {
        Transcript::open(&self.existing(agent, session)?)
    }

    /// Take a session to continue it, from the transcripts kept open between
    /// turns when its file is unchanged, else read afresh ([`Self::open`]).
    /// The caller holds the session's lane and gives it back with
    /// [`Self::checkin`].
    pub fn checkout(&self, agent: &str, session: &str) -> Result<Transcript, SessionError> {
        let kept =
            clawhost_agent_core::lock(&self.open).remove(&(agent.to_string(), session.to_string()));
        match kept {
            Some(t) if t.unchanged_on_disk() => Ok(t),
            _ => self.open(agent, session),
        }
    }

    /// Keep a transcript open for the session's next turn.
    pub fn checkin(&self, agent: &str, t: Transcript) {
        let mut open = clawhost_agent_core::lock(&self.open);
        if open.len() >= KEPT_OPEN {
            let evict = open.keys().next().cloned();
            if let Some(k) = evict {
                open.remove(&k);
            }
        }
        open.insert((agent.to_string(), t.id().to_string()), t);
    }

    /// Load an existing session to read it; its files are never written.
    pub fn open_read_only(&self, agent: &str, session: &str) -> Result<Transcript, SessionError> {
        Transcript::open_read_only(&self.existing(agent, session)?)
    }

    /// Cut a torn last line off a session, keeping a copy of the file first;
    /// returns the copy's path, or `None` when nothing needed repair.
    pub fn repair(&self, agent: &str, session: &str) -> Result<Option<PathBuf>, SessionError> {
        Transcript::repair(&self.existing(agent, session)?)
    }

    /// Fork: a new session whose file holds the branch of `session` up to
    /// `at_entry` (default: its leaf), with `parentSession` set.
    pub fn fork(
        &self,
        agent: &str,
        session: &str,
        at_entry: Option<&str>,
    ) -> Result<Transcript, SessionError> {
        let mut source = self.open_read_only(agent, session)?;
        if let Some(entry) = at_entry {
            source.branch_from(entry)?;
        }
        let mut fork = self.create(agent, Some(session))?;
        for entry in source.branch() {
            fork.append(entry.body.clone())?;
        }
        self.commit(agent, &mut fork)?;
        Ok(fork)
    }

    /// End of a turn: fsync the transcript (unless turned off, see
    /// [`SessionStore::with_fsync`]) and append the session's row to the index.
    pub fn commit(&self, agent: &str, t: &mut Transcript) -> Result<(), SessionError> {
        if self.fsync {
            t.sync()?;
        } else {
            t.flush()?;
        }
        let dir = self.agent_dir(agent)?;
        let _index = clawhost_agent_core::lock(&self.index_lock);
        index::append(&dir, &row(t, now_ms())).map_err(|e| SessionError::io(&dir, e))
    }

    /// Delete a session: its transcript and its index row. A fork keeps its
    /// own copy of the entries it was made from.
    pub fn delete(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        let path = self.existing(agent, session)?;
        let dir = self.agent_dir(agent)?;
        let _index = clawhost_agent_core::lock(&self.index_lock);
        clawhost_agent_core::lock(&self.open).remove(&(agent.to_string(), session.to_string()));
        std::fs::remove_file(&path).map_err(|e| SessionError::io(&path, e))?;
        index::append_removal(&dir, session).map_err(|e| SessionError::io(&dir, e))
    }

    /// Whether a session exists (one `stat`, nothing read).
    pub fn exists(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        self.existing(agent, session).map(|_| ())
    }

    /// Sessions of an agent, newest first, from the index. The index is
    /// checked against the transcripts in the directory: rows of missing
    /// files are dropped, and files without a row, or written after theirs,
    /// are read (after a crash, or when the index was lost); then it is
    /// written afresh if that changed it or it holds many superseded lines.
    pub fn list(&self, agent: &str) -> Result<Vec<IndexEntry>, SessionError> {
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

    /// Record the runtime that owns the session from now on (when it changed).
    pub fn record_runtime(
        &self,
        t: &mut Transcript,
        runtime: &str,
        reason: &str,
    ) -> Result<(), SessionError> {
        if t.runtime().as_deref() != Some(runtime) {
            t.append(EntryBody::Runtime {
                runtime: runtime.into(),
                reason: reason.into(),
            })?;
        }
        Ok(())
    }
}
