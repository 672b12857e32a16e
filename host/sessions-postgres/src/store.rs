//! Sessions as rows: a session's index row (`clawhost_sessions`, which
//! holds its header) and its entries in append order (`clawhost_entries`).
//! A commit appends the new entries in one statement that also moves the
//! row's entry count, from the count the transcript was read at: a writer
//! that was not in the session's lane finds it moved and writes nothing.
//! Every call is one statement (one round trip, prepared once per
//! connection), so each is atomic without a transaction of its own.

use clawhost_sessions::{check_id, Entry, Header, IndexEntry, SessionError, Transcript};
use deadpool_postgres::Pool;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::db::{db_err, pool_err, Db};

/// Run one statement on a pooled connection (prepared once per connection).
async fn query(
    pool: &Pool,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, SessionError> {
    let client = pool.get().await.map_err(pool_err)?;
    let statement = client.prepare_cached(sql).await.map_err(db_err)?;
    client.query(&statement, params).await.map_err(db_err)
}

fn not_found(agent: &str, session: &str) -> SessionError {
    SessionError::NotFound {
        agent: agent.into(),
        session: session.into(),
    }
}

fn ids(agent: &str, session: &str) -> Result<(String, String), SessionError> {
    check_id(agent)?;
    check_id(session)?;
    Ok((agent.to_string(), session.to_string()))
}

fn corrupt(agent: &str, session: &str, e: serde_json::Error) -> SessionError {
    SessionError::Store(format!(
        "session {agent}/{session}: a stored row does not parse: {e}"
    ))
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn create(db: &Db, header: Header) -> Result<Transcript, SessionError> {
    let (agent, id) = ids(&header.agent_id, &header.id)?;
    let text = serde_json::to_string(&header).map_err(|e| corrupt(&agent, &id, e))?;
    let (created, parent) = (ms(header.created_at_ms), header.parent_session.clone());
    let pool = db.pool.clone();
    db.block(async move {
        query(
            &pool,
            "INSERT INTO clawhost_sessions (agent, id, header, created_at_ms, updated_at_ms, parent_session)
             VALUES ($1, $2, $3, $4, $4, $5)",
            &[&agent, &id, &text, &created, &parent],
        )
        .await
    })?;
    Transcript::from_rows(header, Vec::new(), true)
}

pub(crate) fn open(
    db: &Db,
    agent: &str,
    session: &str,
    writable: bool,
) -> Result<Transcript, SessionError> {
    let (a, s) = ids(agent, session)?;
    let pool = db.pool.clone();
    // One statement, one snapshot: the header and the entries of one commit.
    let rows = db.block(async move {
        query(
            &pool,
            "SELECT s.header, e.entry FROM clawhost_sessions s
             LEFT JOIN clawhost_entries e ON e.agent = s.agent AND e.session = s.id
             WHERE s.agent = $1 AND s.id = $2 ORDER BY e.seq",
            &[&a, &s],
        )
        .await
    })?;
    let header: Option<String> = rows.first().map(|r| r.get(0));
    let rows: Vec<String> = rows.iter().filter_map(|r| r.get(1)).collect();
    let header = header.ok_or_else(|| not_found(agent, session))?;
    let header: Header = serde_json::from_str(&header).map_err(|e| corrupt(agent, session, e))?;
    let entries = rows
        .iter()
        .map(|r| serde_json::from_str::<Entry>(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| corrupt(agent, session, e))?;
    Transcript::from_rows(header, entries, writable)
}

pub(crate) fn stored(db: &Db, agent: &str, session: &str) -> Result<u64, SessionError> {
    let (a, s) = ids(agent, session)?;
    let pool = db.pool.clone();
    let count = db.block(async move {
        query(
            &pool,
            "SELECT entries FROM clawhost_sessions WHERE agent = $1 AND id = $2",
            &[&a, &s],
        )
        .await
        .map(|rows| rows.first().map(|r| r.get::<_, i32>(0)))
    })?;
    count
        .map(|c| c.max(0) as u64)
        .ok_or_else(|| not_found(agent, session))
}

pub(crate) fn commit(db: &Db, t: &mut Transcript) -> Result<(), SessionError> {
    let (agent, session) = ids(&t.header().agent_id, t.id())?;
    let from = i32::try_from(t.stored()).unwrap_or(i32::MAX);
    let mut seqs = Vec::new();
    let mut lines = Vec::new();
    for (at, entry) in t.unstored().iter().enumerate() {
        seqs.push(from + at as i32);
        lines.push(serde_json::to_string(entry).map_err(|e| corrupt(&agent, &session, e))?);
    }
    let to = from + seqs.len() as i32;
    let (title, runtime) = (t.title(), t.runtime());
    let now = ms(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default());
    let pool = db.pool.clone();
    let moved = db.block(async move {
        // The row moves only from the count the transcript was read at; the
        // entries are added only if it moved.
        let rows = query(
            &pool,
            "WITH moved AS (
                UPDATE clawhost_sessions
                SET entries = $3, updated_at_ms = $4, title = $5, runtime = $6
                WHERE agent = $1 AND id = $2 AND entries = $7 RETURNING 1),
             added AS (
                INSERT INTO clawhost_entries (agent, session, seq, entry)
                SELECT $1, $2, u.s, u.e FROM unnest($8::int4[], $9::text[]) AS u(s, e)
                WHERE EXISTS (SELECT 1 FROM moved))
             SELECT count(*) FROM moved",
            &[
                &agent, &session, &to, &now, &title, &runtime, &from, &seqs, &lines,
            ],
        )
        .await?;
        Ok(rows.first().map(|r| r.get::<_, i64>(0)) == Some(1))
    })?;
    if !moved {
        let agent = t.header().agent_id.clone();
        stored(db, &agent, t.id())?;
        return Err(SessionError::Conflict {
            session: t.id().into(),
        });
    }
    t.mark_stored();
    Ok(())
}

pub(crate) fn delete(db: &Db, agent: &str, session: &str) -> Result<(), SessionError> {
    let (a, s) = ids(agent, session)?;
    let pool = db.pool.clone();
    let gone = db.block(async move {
        query(
            &pool,
            "DELETE FROM clawhost_sessions WHERE agent = $1 AND id = $2 RETURNING 1",
            &[&a, &s],
        )
        .await
    })?;
    if gone.len() == 1 {
        Ok(())
    } else {
        Err(not_found(agent, session))
    }
}

pub(crate) fn list(db: &Db, agent: &str) -> Result<Vec<IndexEntry>, SessionError> {
    check_id(agent)?;
    let a = agent.to_string();
    let pool = db.pool.clone();
    db.block(async move {
        let rows = query(
            &pool,
            "SELECT id, created_at_ms, updated_at_ms, entries, title, runtime, parent_session
             FROM clawhost_sessions WHERE agent = $1 ORDER BY created_at_ms DESC, id DESC",
            &[&a],
        )
        .await?;
        Ok(rows
            .iter()
            .map(|r| IndexEntry {
                id: r.get(0),
                created_at_ms: r.get::<_, i64>(1).max(0) as u64,
                updated_at_ms: r.get::<_, i64>(2).max(0) as u64,
                entries: r.get::<_, i32>(3).max(0) as usize,
                title: r.get(4),
                runtime: r.get(5),
                parent_session: r.get(6),
                bytes: None,
            })
            .collect())
    })
}

pub(crate) fn agents(db: &Db) -> Result<Vec<String>, SessionError> {
    let pool = db.pool.clone();
    db.block(async move {
        let rows = query(
            &pool,
            "SELECT DISTINCT agent FROM clawhost_sessions ORDER BY agent",
            &[],
        )
        .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    })
}
