//! The database schema, versioned: each migration runs once, in order, in
//! one transaction under an advisory lock (replicas starting together apply
//! it once). A database whose schema is newer than this build's is refused
//! before anything is written.

use clawhost_sessions::SessionError;

use crate::db::db_err;

/// Migrations by version (1-based); append only, never edit a released one.
const MIGRATIONS: &[&str] = &[
    // 1: sessions (the index), their entries in order, pending approvals.
    "CREATE TABLE clawhost_sessions (
        agent text NOT NULL,
        id text NOT NULL,
        header text NOT NULL,
        created_at_ms bigint NOT NULL,
        updated_at_ms bigint NOT NULL,
        entries integer NOT NULL DEFAULT 0,
        title text NOT NULL DEFAULT '',
        runtime text,
        parent_session text,
        PRIMARY KEY (agent, id)
    );
    CREATE TABLE clawhost_entries (
        agent text NOT NULL,
        session text NOT NULL,
        seq integer NOT NULL,
        entry text NOT NULL,
        PRIMARY KEY (agent, session, seq),
        FOREIGN KEY (agent, session) REFERENCES clawhost_sessions (agent, id) ON DELETE CASCADE
    );
    CREATE TABLE clawhost_approvals (
        id text PRIMARY KEY,
        decision text,
        created_at timestamptz NOT NULL DEFAULT now()
    );",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// Bring the schema to [`SCHEMA_VERSION`]; refuse a newer one.
pub(crate) async fn migrate(client: &mut tokio_postgres::Client) -> Result<(), SessionError> {
    let tx = client.transaction().await.map_err(db_err)?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('clawhost:schema', 0));
         CREATE TABLE IF NOT EXISTS clawhost_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());",
    )
    .await
    .map_err(db_err)?;
    let row = tx
        .query_one("SELECT coalesce(max(version), 0) FROM clawhost_schema", &[])
        .await
        .map_err(db_err)?;
    let current: i32 = row.get(0);
    refuse_newer(current)?;
    for (at, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.batch_execute(sql).await.map_err(db_err)?;
        tx.execute(
            "INSERT INTO clawhost_schema (version) VALUES ($1)",
            &[&(at as i32 + 1)],
        )
        .await
        .map_err(db_err)?;
    }
    tx.commit().await.map_err(db_err)
}

/// Refuse a schema newer than this build's.
fn refuse_newer(current: i32) -> Result<(), SessionError> {
    if current > SCHEMA_VERSION {
        return Err(SessionError::Store(format!(
            "the database's clawhost schema is version {current}, newer than this build's {SCHEMA_VERSION}: run a clawhost at least as new (nothing was changed)"
        )));
    }
    Ok(())
}

/// The schema version of the database (0: none yet), read without
/// creating anything; refused when newer than this build's.
pub(crate) async fn version(client: &tokio_postgres::Client) -> Result<i32, SessionError> {
    let row = client
        .query_one("SELECT to_regclass('clawhost_schema') IS NOT NULL", &[])
        .await
        .map_err(db_err)?;
    if !row.get::<_, bool>(0) {
        return Ok(0);
    }
    let row = client
        .query_one("SELECT coalesce(max(version), 0) FROM clawhost_schema", &[])
        .await
        .map_err(db_err)?;
    let current: i32 = row.get(0);
    refuse_newer(current)?;
    Ok(current)
}
