//! Registered plugin harnesses by id, and their lifecycle.

use std::collections::BTreeMap;
use std::sync::Arc;

use clawhost_agent_core::{Harness, Route, Support};

/// Why harnesses could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HarnessIdError {
    /// A plugin registers a harness under a built-in id or alias.
    #[error("harness id `{0}` is reserved")]
    Reserved(String),
    /// Two plugins register the same id.
    #[error("two plugins register harness `{0}`")]
    Duplicate(String),
}

/// Plugin harnesses by runtime id (the built-in `openclaw` is not listed).
#[derive(Default, Clone)]
pub struct HarnessRegistry {
    harnesses: BTreeMap<String, Arc<dyn Harness>>,
}

impl HarnessRegistry {
    /// Register harnesses; a duplicate or reserved id is an error naming it.
    pub fn new(harnesses: Vec<Arc<dyn Harness>>) -> Result<Self, HarnessIdError> {
        let mut map = BTreeMap::new();
        for h in harnesses {
            let id = h.id().to_string();
            if crate::normalize(Some(&id)) != crate::RuntimeId::Plugin(id.clone()) {
                return Err(HarnessIdError::Reserved(id));
            }
            if map.insert(id.clone(), h).is_some() {
                return Err(HarnessIdError::Duplicate(id));
            }
        }
        Ok(Self { harnesses: map })
    }

    /// A harness by id.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn Harness>> {
        self.harnesses.get(id)
    }

    /// Registered ids.
    pub fn ids(&self) -> Vec<String> {
        self.harnesses.keys().cloned().collect()
    }

    /// Every harness's claim on a route, by id.
    pub async fn supports(&self, route: &Route) -> Vec<(String, Support)> {
        let mut out = Vec::new();
        for (id, h) in &self.harnesses {
            out.push((id.clone(), h.supports(route).await));
        }
        out
    }

    /// Dispose every harness (on shutdown).
    pub async fn dispose_all(&self) {
        for h in self.harnesses.values() {
            h.dispose().await;
        }
    }
}
