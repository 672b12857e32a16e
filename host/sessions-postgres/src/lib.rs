//! The session store in PostgreSQL, shared by any number of gateway
//! replicas: transcripts as rows appended in one transaction per commit
//! (the same tree, forks and compaction as the files), the session index as
//! a table, lanes as advisory locks, and approvals relayed between replicas
//! with `LISTEN`/`NOTIFY`. Configured with `sessions.store:
//! "postgres://…"`; the schema is migrated at start.

mod db;
mod lock;
mod relay;
mod schema;
mod store;

use std::sync::Arc;

use clawhost_sessions::{
    ApprovalRelay, Backend, BoxFuture, Header, IndexEntry, LaneLock, SessionError, Transcript,
};

pub use schema::SCHEMA_VERSION;

/// Whether `store` (the `sessions.store` setting) names a PostgreSQL database.
pub fn is_postgres_url(store: &str) -> bool {
    store.starts_with("postgres://") || store.starts_with("postgresql://")
}

/// Sessions in one PostgreSQL database.
pub struct PostgresBackend {
    db: db::Db,
    relay: Arc<relay::Relay>,
    lanes: Arc<lock::Lanes>,
}

impl std::fmt::Debug for PostgresBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresBackend")
            .field("db", &self.db)
            .finish()
    }
}

impl PostgresBackend {
    /// Connect to `url` with a pool of at most `pool` connections, and bring
    /// the schema up to date. Fails, having written nothing, on a bad URL, a
    /// refused login, or a schema newer than this build's.
    pub async fn connect(url: &str, pool: usize) -> Result<Self, SessionError> {
        let db = db::Db::new(url, pool)?;
        let pool = db.pool.clone();
        db.run(async move {
            let mut client = pool.get().await.map_err(db::pool_err)?;
            schema::migrate(&mut client).await?;
            // Requests of replicas that died waiting (a day is past any timeout).
            client
                .execute(
                    "DELETE FROM clawhost_approvals WHERE created_at < now() - interval '1 day'",
                    &[],
                )
                .await
                .map_err(db::db_err)
                .map(drop)
        })
        .await
        .map_err(|e| db.at(e))?;
        let relay = relay::Relay::start(db.clone());
        let lanes = lock::Lanes::new(db.clone());
        Ok(Self { db, relay, lanes })
    }
}

/// Connect to `url` and read its clawhost schema version (0: none yet),
/// changing nothing; a version newer than this build's is an error.
pub async fn probe(url: &str) -> Result<i32, SessionError> {
    let db = db::Db::new(url, 2)?;
    let pool = db.pool.clone();
    db.run(async move {
        let client = pool.get().await.map_err(db::pool_err)?;
        schema::version(&client).await
    })
    .await
    .map_err(|e| db.at(e))
}

impl Backend for PostgresBackend {
    fn create(&self, header: Header) -> Result<Transcript, SessionError> {
        store::create(&self.db, header)
    }

    fn open(&self, agent: &str, session: &str, writable: bool) -> Result<Transcript, SessionError> {
        store::open(&self.db, agent, session, writable)
    }

    fn stored(&self, agent: &str, session: &str) -> Result<u64, SessionError> {
        store::stored(&self.db, agent, session)
    }

    fn commit(&self, t: &mut Transcript) -> Result<(), SessionError> {
        store::commit(&self.db, t)
    }

    fn delete(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        store::delete(&self.db, agent, session)
    }

    fn exists(&self, agent: &str, session: &str) -> Result<(), SessionError> {
        store::stored(&self.db, agent, session).map(drop)
    }

    fn list(&self, agent: &str) -> Result<Vec<IndexEntry>, SessionError> {
        store::list(&self.db, agent)
    }

    fn agents(&self) -> Result<Vec<String>, SessionError> {
        store::agents(&self.db)
    }

    fn lock<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Option<LaneLock>, SessionError>> {
        Box::pin(self.lanes.clone().lock(session))
    }

    fn ready(&self) -> BoxFuture<'_, Result<(), SessionError>> {
        let pool = self.db.pool.clone();
        Box::pin(self.db.run(async move {
            let client = pool.get().await.map_err(db::pool_err)?;
            client
                .execute("SELECT 1", &[])
                .await
                .map_err(db::db_err)
                .map(drop)
        }))
    }

    fn approvals(&self) -> Option<Arc<dyn ApprovalRelay>> {
        Some(self.relay.clone())
    }

    fn describe(&self) -> String {
        self.db.name.clone()
    }
}
