//! The session store: one front over a [`Backend`] (files or a database)
//! with what every backend shares: new ids, forks, imports, and the
//! transcripts kept open between turns.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::backend::{ApprovalRelay, Backend};
use crate::entry::{Entry, EntryBody, Header, TRANSCRIPT_VERSION};
use crate::files::{check_id, FileBackend};
use crate::index::IndexEntry;
use crate::transcript::{now_ms, Transcript};
use crate::SessionError;

/// How many transcripts a store keeps open between turns (each holds its
/// entries, and a file handle for the file store).
const KEPT_OPEN: usize = 256;

/// The session store of all agents. Clones share the backend and the
/// transcripts kept open.
#[derive(Debug, Clone)]
pub struct SessionStore {
    backend: Arc<dyn Backend>,
    /// The file backend, when that is the one (for [`Self::adopt`]).
    files: Option<FileBackend>,
    /// Transcripts kept open between turns, so a turn does not re-read its
    /// session.
    open: Arc<Mutex<HashMap<(String, String), Transcript>>>,
}

impl SessionStore {
    /// A store of JSONL files rooted at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let files = FileBackend::new(root);
        Self {
            backend: Arc::new(files.clone()),
            files: Some(files),
            open: Arc::default(),
        }
    }

    /// A store over another backend (a database).
    pub fn with_backend(backend: Arc<dyn Backend>) -> Self {
        Self {
            backend,
            files: None,
            open: Arc::default(),
        }
    }

    /// Whether a commit fsyncs a file store's transcript (the default; see
    /// [`FileBackend::with_fsync`]). Other stores are unchanged.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        if let Some(files) = self.files.take() {
            let files = files.with_fsync(fsync);
            self.backend = Arc::new(files.clone());
            self.files = Some(files);
        }
        self
    }

    /// A file store: move the store at `old` (where an older version kept
    /// it) to this store's root, when the root does not exist yet and `old`
    /// does. Returns whether it moved.
    pub fn adopt(&self, old: &Path) -> Result<bool, SessionError> {
        match &self.files {
            Some(files) => files.adopt(old),
            None => Ok(false),
        }
    }

    /// The backend the sessions are kept in.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Where the sessions are, for messages (no secrets).
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Approvals shared by every process on this store, when it has them.
    pub fn approvals(&self) -> Option<Arc<dyn ApprovalRelay>> {
        self.backend.approvals()
    }

    /// Whether the store answers now (for readiness).
    pub async fn ready(&self) -> Result<(), SessionError> {
        self.backend.ready().await
    }

    /// Start a new session (fresh id) for an agent.
    pub fn create(&self, agent: &str, parent: Option<&str>) -> Result<Transcript, SessionError> {
        check_id(agent)?;
        let header = Header {
            kind: "session".into(),
            version: TRANSCRIPT_VERSION,
            id: format!("{}-{:06x}", now_ms(), fastrand::u32(..) & 0xff_ffff),
            agent_id: agent.into(),
            created_at_ms: now_ms(),
            cwd: std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            parent_session: parent.map(Into::into),
        };
        self.backend.create(header)
    }

    /// Open an existing session to continue it (a file store refuses it
    /// while its last line is torn: see [`SessionStore::repair`]).
    pub fn open(&self, agent: &str, session: &str) -> Result<Transcript, SessionError> {
        self.backend.open(agent, session, true)
    }

    /// Take a session to continue it, from the transcripts kept open between
    /// turns when the store holds no more of it, else read afresh
    /// ([`Self::open`]). The caller holds the session's lane and gives it
    /// back with [`Self::checkin`].
    pub fn checkout(&self, agent: &str, session: &str) -> Result<Transcript, SessionError> {
        let kept =
            clawhost_agent_core::lock(&self.open).remove(&(agent.to_string(), session.to_string()));
        match kept {
            Some(t) if self.backend.stored(agent, session).ok() == Some(t.stored()) => Ok(t),
            _ => self.open(agent, session),
        }
    }

    /// Keep a transcript open for the session's next turn (not one holding
    /// entries a failed commit did not store: they are dropped with it).
    pub fn checkin(&self, agent: &str, t: Transcript) {
        if !t.unstored().is_empty() {
            return;
        }
        let mut open = clawhost_agent_core::lock(&self.open);
        if open.len() >= KEPT_OPEN {
            let evict = open.keys().next().cloned();
            if let Some(k) = evict {
                open.remove(&k);
            }
        }
        open.insert((agent.to_string(), t.id().to_string()), t);
    }

    /// Load an existing session to read it; it is never written.
    pub fn open_read_only(&self, agent: &str, session: &str) -> Result<Transcript, SessionError> {
        self.backend.open(agent, session, false)
    }

    /// Cut a torn last line off a file session, keeping a copy of the file
    /// first; returns the copy's path, or `None` when nothing needed repair.
    pub fn repair(&self, agent: &str, session: &str) -> Result<Option<PathBuf>, SessionError> {
        self.backend.repair(agent, session)
    }

    /// Fork: a new session holding the branch of `session` up to `at_entry`
    /// (default: its leaf), with `parentSession` set.
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

    /// End of a turn: make what was appended durable and update the
    /// session's index row.
    pub fn commit(&self, agent: &str, t: &mut Transcript) -> Result<(), SessionError> {
        if t.header().agent_id != agent {
            return Err(SessionError::NotFound {
                agent: agent.into(),
                session: t.id().into(),
            });
        }
        self.backend.commit(t)
    }

    /// Delete a session: its entries and its index row. A fork keeps its
    /// own copy of the entries it was made from.
    pub fn delete(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        clawhost_agent_core::lock(&self.open).remove(&(agent.to_string(), session.to_string()));
        self.backend.delete(agent, session)
    }

    /// Whether a session exists: kept open here, else asked of the store
    /// (a session deleted elsewhere since is found gone at its checkout).
    pub fn exists(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        let key = (agent.to_string(), session.to_string());
        if clawhost_agent_core::lock(&self.open).contains_key(&key) {
            return Ok(());
        }
        self.backend.exists(agent, session)
    }

    /// Sessions of an agent, newest first.
    pub fn list(&self, agent: &str) -> Result<Vec<IndexEntry>, SessionError> {
        self.backend.list(agent)
    }

    /// The agents with stored sessions.
    pub fn agents(&self) -> Result<Vec<String>, SessionError> {
        self.backend.agents()
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

    /// Store a session recorded elsewhere (an import): its header and its
    /// entries, ids and times kept. `Ok(false)`: a session with that id is
    /// already here and left as it is.
    pub fn import(&self, header: Header, entries: Vec<Entry>) -> Result<bool, SessionError> {
        if self.exists(&header.agent_id, &header.id).is_ok() {
            return Ok(false);
        }
        let agent = header.agent_id.clone();
        let mut t = self.backend.create(header)?;
        for entry in entries {
            t.push_recorded(entry)?;
        }
        self.commit(&agent, &mut t)?;
        Ok(true)
    }
}
