//! Per-session lanes: runs on one session are serialized, different sessions
//! run concurrently.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// One lock per session id.
#[derive(Debug, Default, Clone)]
pub struct SessionLanes {
    lanes: Arc<Mutex<HashMap<String, Arc<AsyncMutex<()>>>>>,
}

impl SessionLanes {
    /// No lanes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wait for the session's lane; the run holds the guard until it ends.
    pub async fn enter(&self, session_id: &str) -> OwnedMutexGuard<()> {
        let lane = clawhost_agent_core::lock(&self.lanes)
            .entry(session_id.to_string())
            .or_default()
            .clone();
        lane.lock_owned().await
    }
}
