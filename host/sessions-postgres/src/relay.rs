//! Approvals across replicas: the replica running a turn records the
//! request's id (`clawhost_approvals`); any replica answers it with one
//! statement that sets the decision once and notifies
//! (`NOTIFY clawhost_approvals`); the waiting replica listens on a
//! connection of its own, reconnecting after the database restarts (and
//! then reading the decisions it may have missed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clawhost_sessions::{ApprovalRelay, BoxFuture, SessionError};
use futures::StreamExt;
use tokio::sync::oneshot;
use tokio_postgres::{AsyncMessage, NoTls};

use deadpool_postgres::Pool;

use crate::db::{db_err, pool_err, Db};

/// The channel answers are notified on.
const CHANNEL: &str = "clawhost_approvals";

type Waiters = Arc<Mutex<HashMap<String, Vec<oneshot::Sender<String>>>>>;

/// The relay of one replica.
pub(crate) struct Relay {
    db: Db,
    waiters: Waiters,
}

impl Relay {
    /// Start listening (on the store's runtime, for as long as it runs).
    pub(crate) fn start(db: Db) -> Arc<Self> {
        let waiters = Waiters::default();
        // The listener holds no `Db` (which would keep the store's runtime
        // running): it stops once the relay is dropped.
        db.handle.spawn(listen(
            db.config.clone(),
            db.pool.clone(),
            db.name.clone(),
            Arc::downgrade(&waiters),
        ));
        Arc::new(Self { db, waiters })
    }
}

/// Give `decision` to whoever waits for `id` here.
fn deliver(waiters: &Waiters, id: &str, decision: &str) {
    let waiting = clawhost_agent_core::lock(waiters).remove(id);
    for tx in waiting.into_iter().flatten() {
        let _ = tx.send(decision.to_string());
    }
}

/// The decision stored for `id`, if any.
async fn stored_decision(pool: &Pool, id: String) -> Result<Option<String>, SessionError> {
    let client = pool.get().await.map_err(pool_err)?;
    let row = client
        .query_opt(
            "SELECT decision FROM clawhost_approvals WHERE id = $1",
            &[&id],
        )
        .await
        .map_err(db_err)?;
    Ok(row.and_then(|r| r.get(0)))
}

/// Listen for answers; after each (re)connection, read the decisions of the
/// ids still waiting (given while nobody listened).
async fn listen(
    config: tokio_postgres::Config,
    pool: Pool,
    name: String,
    waiters: std::sync::Weak<Mutex<HashMap<String, Vec<oneshot::Sender<String>>>>>,
) {
    while waiters.strong_count() > 0 {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                let pump = tokio::spawn(async move {
                    let mut messages = std::pin::pin!(messages);
                    while let Some(Ok(message)) = messages.next().await {
                        if let AsyncMessage::Notification(n) = message {
                            let _ = tx.send(n.payload().to_string());
                        }
                    }
                });
                if client
                    .batch_execute(&format!("LISTEN {CHANNEL}"))
                    .await
                    .is_ok()
                {
                    let ids: Vec<String> = match waiters.upgrade() {
                        Some(w) => clawhost_agent_core::lock(&w).keys().cloned().collect(),
                        None => return,
                    };
                    for id in ids {
                        if let Ok(Some(decision)) = stored_decision(&pool, id.clone()).await {
                            let Some(w) = waiters.upgrade() else { return };
                            deliver(&w, &id, &decision);
                        }
                    }
                    while let Some(payload) = rx.recv().await {
                        let Some(w) = waiters.upgrade() else { return };
                        if let Some((id, decision)) = payload.split_once(' ') {
                            deliver(&w, id, decision);
                        }
                    }
                }
                pump.abort();
                tracing::warn!(store = %name, "the approvals listener lost its connection; reconnecting");
            }
            Err(e) => {
                tracing::debug!(store = %name, error = %e, "the approvals listener cannot connect; retrying");
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

impl ApprovalRelay for Relay {
    fn offer<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SessionError>> {
        let (pool, id) = (self.db.pool.clone(), id.to_string());
        Box::pin(self.db.run(async move {
            let client = pool.get().await.map_err(pool_err)?;
            client
                .execute("INSERT INTO clawhost_approvals (id) VALUES ($1)", &[&id])
                .await
                .map_err(db_err)
                .map(drop)
        }))
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        decision: &'a str,
    ) -> BoxFuture<'a, Result<bool, SessionError>> {
        let (pool, id, decision) = (self.db.pool.clone(), id.to_string(), decision.to_string());
        Box::pin(self.db.run(async move {
            let client = pool.get().await.map_err(pool_err)?;
            let rows = client
                .query(
                    "WITH answered AS (
                        UPDATE clawhost_approvals SET decision = $2
                        WHERE id = $1 AND decision IS NULL RETURNING id)
                     SELECT pg_notify($3, id || ' ' || $2) FROM answered",
                    &[&id, &decision, &CHANNEL],
                )
                .await
                .map_err(db_err)?;
            Ok(!rows.is_empty())
        }))
    }

    fn answered<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<String>> {
        let (tx, rx) = oneshot::channel();
        clawhost_agent_core::lock(&self.waiters)
            .entry(id.to_string())
            .or_default()
            .push(tx);
        let (db, id) = (self.db.clone(), id.to_string());
        let pool = db.pool.clone();
        Box::pin(async move {
            // Answered before this waiter was registered?
            if let Ok(Some(decision)) = db
                .run(async move { stored_decision(&pool, id).await })
                .await
            {
                return Some(decision);
            }
            rx.await.ok()
        })
    }

    fn withdraw(&self, id: &str) {
        clawhost_agent_core::lock(&self.waiters).remove(id);
        let (pool, id) = (self.db.pool.clone(), id.to_string());
        self.db.handle.spawn(async move {
            if let Ok(client) = pool.get().await {
                let _ = client
                    .execute("DELETE FROM clawhost_approvals WHERE id = $1", &[&id])
                    .await;
            }
        });
    }
}
