//! What a session store keeps sessions in: the interface the JSONL files
//! ([`crate::FileBackend`]) and a database (the `clawhost-sessions-postgres`
//! crate) implement. [`crate::SessionStore`] is the one front of both.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Header, IndexEntry, SessionError, Transcript};

/// A boxed future, as the async parts of a [`Backend`] return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A session lock held across processes; dropping it releases the lock.
pub type LaneLock = Box<dyn Send + Sync>;

/// Where sessions are kept. Calls other than [`Backend::lock`],
/// [`Backend::ready`] and the approvals relay block their thread for the
/// store's round trip (a file's fsync, a database's transaction).
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Store a new session with its header and nothing else.
    fn create(&self, header: Header) -> Result<Transcript, SessionError>;

    /// Load a session: to continue it (`writable`, refused when it needs
    /// repair) or to read it.
    fn open(&self, agent: &str, session: &str, writable: bool) -> Result<Transcript, SessionError>;

    /// What the store holds of a session now, comparable with
    /// [`Transcript::stored`]: a kept-open transcript is reused only when
    /// they are equal.
    fn stored(&self, agent: &str, session: &str) -> Result<u64, SessionError>;

    /// Make what was appended to `t` durable and update its index row.
    fn commit(&self, t: &mut Transcript) -> Result<(), SessionError>;

    /// Delete a session (its entries and its index row).
    fn delete(&self, agent: &str, session: &str) -> Result<(), SessionError>;

    /// Whether a session exists.
    fn exists(&self, agent: &str, session: &str) -> Result<(), SessionError>;

    /// The index rows of an agent's sessions, newest first.
    fn list(&self, agent: &str) -> Result<Vec<IndexEntry>, SessionError>;

    /// The agents with stored sessions.
    fn agents(&self) -> Result<Vec<String>, SessionError>;

    /// Cut a torn last line off a session (files only); the backup's path.
    fn repair(&self, agent: &str, session: &str) -> Result<Option<PathBuf>, SessionError> {
        self.exists(agent, session).map(|()| None)
    }

    /// Take the session's lock shared by every process on this store, held
    /// until the returned value is dropped; `None` when the store is one
    /// process's (its in-process lane is enough).
    fn lock<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Option<LaneLock>, SessionError>> {
        let _ = session;
        Box::pin(async { Ok(None) })
    }

    /// Whether the store answers now (for readiness).
    fn ready(&self) -> BoxFuture<'_, Result<(), SessionError>> {
        Box::pin(async { Ok(()) })
    }

    /// Approvals shared by every process on this store, when it has them.
    fn approvals(&self) -> Option<Arc<dyn ApprovalRelay>> {
        None
    }

    /// Where the sessions are, for messages (no secrets).
    fn describe(&self) -> String;
}

/// Pending approvals shared between processes: one process waits for an
/// answer, any process may give it.
pub trait ApprovalRelay: Send + Sync {
    /// Record that `id` waits for an answer.
    fn offer<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SessionError>>;

    /// Answer `id` with `decision` (once); `false` when nobody waits for it.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        decision: &'a str,
    ) -> BoxFuture<'a, Result<bool, SessionError>>;

    /// Wait for the answer to `id` given through another process (`None`:
    /// the relay stopped).
    fn answered<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<String>>;

    /// Forget `id` (answered here, timed out, or its run ended).
    fn withdraw(&self, id: &str);
}
