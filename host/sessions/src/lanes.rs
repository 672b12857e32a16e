//! Per-session lanes: runs on one session are serialized, different sessions
//! run concurrently. On a store shared by several processes the lane also
//! holds the store's lock on the session, so the serialization holds across
//! every replica.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::backend::{Backend, LaneLock};
use crate::SessionError;

/// One lock per session id, and the store's locks when it is shared.
#[derive(Debug, Clone)]
pub struct SessionLanes {
    lanes: Arc<Mutex<HashMap<String, Arc<AsyncMutex<()>>>>>,
    shared: Option<Arc<dyn Backend>>,
}

/// A session's lane, held by one run until it is dropped.
pub struct Lane {
    _shared: Option<LaneLock>,
    _local: OwnedMutexGuard<()>,
}

impl SessionLanes {
    /// Lanes of this process only.
    pub fn new() -> Self {
        Self {
            lanes: Arc::default(),
            shared: None,
        }
    }

    /// Lanes that also take `backend`'s lock on the session (a no-op for a
    /// store that is one process's).
    pub fn shared(backend: Arc<dyn Backend>) -> Self {
        Self {
            lanes: Arc::default(),
            shared: Some(backend),
        }
    }

    /// Wait for the session's lane: first this process's, then the store's
    /// (so one process waits on the store once per session). Fails only
    /// when a shared store cannot be reached.
    pub async fn enter(&self, session_id: &str) -> Result<Lane, SessionError> {
        let lane = clawhost_agent_core::lock(&self.lanes)
            .entry(session_id.to_string())
            .or_default()
            .clone();
        let local = lane.lock_owned().await;
        let shared = match &self.shared {
            Some(backend) => backend.lock(session_id).await?,
            None => None,
        };
        Ok(Lane {
            _shared: shared,
            _local: local,
        })
    }
}

impl Default for SessionLanes {
    fn default() -> Self {
        Self::new()
    }
}
