//! A session's lane across replicas: a PostgreSQL advisory lock on the
//! session id. Every lane of a replica is held on one connection of its own
//! (an advisory lock belongs to the connection that took it), so a turn
//! does not keep a pooled connection busy: it takes the lock with
//! `pg_try_advisory_lock`, retrying after 5 ms, doubling up to 100 ms,
//! while another replica holds it. When a replica dies its connection
//! closes and the server releases every lock it held at once.

use std::sync::Arc;
use std::time::Duration;

use clawhost_sessions::{LaneLock, SessionError};
use tokio::sync::oneshot;
use tokio_postgres::{NoTls, Statement};

use crate::db::{db_err, Db};

/// The longest one attempt at the lock may take (the database is down).
const ATTEMPT: Duration = Duration::from_secs(10);

/// The connection holding this replica's lanes, and its statements.
struct LockConn {
    client: tokio_postgres::Client,
    try_lock: Statement,
    unlock: Statement,
}

/// The lanes of one replica.
pub(crate) struct Lanes {
    db: Db,
    conn: tokio::sync::Mutex<Option<Arc<LockConn>>>,
}

/// A held lock; dropping it unlocks (on the connection that took it).
struct Held {
    conn: Arc<LockConn>,
    key: String,
    handle: tokio::runtime::Handle,
}

impl Drop for Held {
    fn drop(&mut self) {
        let (conn, key) = (self.conn.clone(), std::mem::take(&mut self.key));
        self.handle.spawn(async move {
            // A closed connection has released its locks already.
            let _ = conn.client.query_one(&conn.unlock, &[&key]).await;
        });
    }
}

impl Lanes {
    pub(crate) fn new(db: Db) -> Arc<Self> {
        Arc::new(Self {
            db,
            conn: tokio::sync::Mutex::new(None),
        })
    }

    /// The lock connection, opened again when it was lost.
    async fn conn(&self) -> Result<Arc<LockConn>, SessionError> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref().filter(|c| !c.client.is_closed()) {
            return Ok(conn.clone());
        }
        let (client, connection) = self.db.config.connect(NoTls).await.map_err(db_err)?;
        tokio::spawn(connection);
        let try_lock = client
            .prepare("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
            .await
            .map_err(db_err)?;
        let unlock = client
            .prepare("SELECT pg_advisory_unlock(hashtextextended($1, 0))")
            .await
            .map_err(db_err)?;
        let conn = Arc::new(LockConn {
            client,
            try_lock,
            unlock,
        });
        *slot = Some(conn.clone());
        Ok(conn)
    }

    /// One attempt: the lock if it was free.
    async fn attempt(&self, key: &str) -> Result<Option<Arc<LockConn>>, SessionError> {
        let conn = self.conn().await?;
        let row = conn
            .client
            .query_one(&conn.try_lock, &[&key])
            .await
            .map_err(db_err)?;
        Ok(row.get::<_, bool>(0).then_some(conn))
    }

    /// Wait for the session's lock, for as long as another holds it. Given
    /// up (the caller stopped waiting), it is not taken, or is released at
    /// once if it was just taken.
    pub(crate) async fn lock(
        self: Arc<Self>,
        session: &str,
    ) -> Result<Option<LaneLock>, SessionError> {
        let key = format!("clawhost:lane:{session}");
        let (tx, rx) = oneshot::channel::<Result<Held, SessionError>>();
        let handle = self.db.handle.clone();
        handle.clone().spawn(async move {
            let mut pause = Duration::from_millis(5);
            while !tx.is_closed() {
                let attempt = tokio::time::timeout(ATTEMPT, self.attempt(&key)).await;
                let got = match attempt {
                    Ok(Ok(got)) => got,
                    Ok(Err(e)) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                    Err(_) => {
                        let _ = tx.send(Err(SessionError::Unavailable(format!(
                            "no answer from the database in {} s",
                            ATTEMPT.as_secs()
                        ))));
                        return;
                    }
                };
                if let Some(conn) = got {
                    // The waiter left meanwhile: `Held` unlocks as it drops.
                    let _ = tx.send(Ok(Held { conn, key, handle }));
                    return;
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(100));
            }
        });
        match rx.await {
            Ok(Ok(held)) => Ok(Some(Box::new(held))),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(SessionError::Unavailable(
                "the store's runtime has stopped".into(),
            )),
        }
    }
}
