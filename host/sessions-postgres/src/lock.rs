//! A session's lane across replicas: a PostgreSQL advisory lock on the
//! session id, held by a pooled connection for the turn. Released when the
//! turn drops it, or by the server when the replica holding it dies (its
//! connection closes).

use clawhost_sessions::{LaneLock, SessionError};
use deadpool_postgres::Object;
use tokio::sync::oneshot;

use crate::db::{db_err, pool_err, Db};

/// The key of a session's lock (namespaced, so other users of the database
/// do not collide with it).
fn key(session: &str) -> String {
    format!("clawhost:lane:{session}")
}

/// A held lock; dropping it unlocks and gives the connection back.
struct Held {
    client: Option<Object>,
    key: String,
    handle: tokio::runtime::Handle,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let key = std::mem::take(&mut self.key);
        self.handle.spawn(async move {
            let unlocked = client
                .query_one(
                    "SELECT pg_advisory_unlock(hashtextextended($1, 0))",
                    &[&key],
                )
                .await
                .map(|r| r.get::<_, bool>(0));
            if !matches!(unlocked, Ok(true)) {
                // Not reused: closing the connection releases its locks.
                drop(Object::take(client));
            }
        });
    }
}

/// Wait for the session's lock. Given up (the caller stopped waiting), the
/// wait is cancelled by closing its connection, so no lock is left behind.
pub(crate) async fn lock(db: &Db, session: &str) -> Result<Option<LaneLock>, SessionError> {
    let (tx, rx) = oneshot::channel::<Result<Held, SessionError>>();
    let (pool, handle, key) = (db.pool.clone(), db.handle.clone(), key(session));
    db.handle.spawn(async move {
        let mut tx = tx;
        let client = match pool.get().await {
            Ok(c) => c,
            Err(e) => {
                let _ = tx.send(Err(pool_err(e)));
                return;
            }
        };
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
        let locked = tokio::select! {
            r = client.execute("SELECT pg_advisory_lock(hashtextextended($1, 0))", &params) => Some(r),
            () = tx.closed() => None,
        };
        match locked {
            Some(Ok(_)) => {
                let held = Held {
                    client: Some(client),
                    key,
                    handle,
                };
                // The waiter left meanwhile: `held` unlocks as it drops.
                let _ = tx.send(Ok(held));
            }
            Some(Err(e)) => {
                let _ = tx.send(Err(db_err(e)));
            }
            None => drop(Object::take(client)),
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
