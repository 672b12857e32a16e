//! What can go wrong storing sessions.

use std::path::{Path, PathBuf};

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
    /// The session store cannot be reached now (the database is down or
    /// its connections are all taken); the request may be retried.
    #[error("the session store is unavailable: {0}")]
    Unavailable(String),
    /// The session store refused or failed an operation.
    #[error("session store: {0}")]
    Store(String),
    /// The session was written by someone else since it was read (a turn
    /// outside its lane); nothing was written.
    #[error(
        "session `{session}` was changed by another writer; nothing was written, retry the turn"
    )]
    Conflict {
        /// Session.
        session: String,
    },
}

impl SessionError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        SessionError::Io {
            path: path.into(),
            source,
        }
    }
}
