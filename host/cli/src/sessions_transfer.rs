//! `clawhost sessions export|import`: every session of a store as JSON
//! lines (a session's header line, then its entries, as in its file), so a
//! deployment moves between the files and PostgreSQL without losing history:
//! `clawhost sessions export | clawhost sessions import --store postgres://…`.

use std::io::{BufRead, Write};

use anyhow::{bail, Context};
use clawhost_config::Config;
use clawhost_sessions::{Entry, Header, SessionStore};

/// Point `config` at `store`: a `postgres://` URL, else a directory of
/// session files.
pub fn choose_store(config: &mut Config, store: &str) {
    if clawhost_sessions_postgres::is_postgres_url(store) {
        config.sessions.store = Some(store.to_string());
    } else {
        config.sessions.store = None;
        config.sessions.dir = Some(std::path::PathBuf::from(store));
    }
}

/// Write every session of every agent to stdout.
pub fn export(store: &SessionStore) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut sessions, mut entries) = (0, 0);
    for agent in store.agents()? {
        for row in store.list(&agent)? {
            let t = store.open_read_only(&agent, &row.id)?;
            for w in t.warnings() {
                esay!("warning: {w}");
            }
            writeln!(out, "{}", serde_json::to_string(t.header())?)?;
            for e in t.entries() {
                writeln!(out, "{}", serde_json::to_string(e)?)?;
            }
            sessions += 1;
            entries += t.entries().len();
        }
    }
    out.flush()?;
    esay!(
        "exported {sessions} sessions ({entries} entries) from {}",
        store.describe()
    );
    Ok(())
}

/// One session read from the stream.
struct Incoming {
    header: Header,
    entries: Vec<Entry>,
}

/// Read sessions from stdin into `store`. Every line is checked before
/// anything is written: a line that is neither a header nor an entry stops
/// the import with its number.
pub fn import(store: &SessionStore) -> anyhow::Result<()> {
    let mut sessions: Vec<Incoming> = Vec::new();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(&line).with_context(|| format!("line {}: not JSON", n + 1))?;
        if value.get("type").and_then(|t| t.as_str()) == Some("session") {
            let header: Header = serde_json::from_value(value)
                .with_context(|| format!("line {}: not a session header", n + 1))?;
            clawhost_sessions::check_id(&header.agent_id)?;
            clawhost_sessions::check_id(&header.id)?;
            sessions.push(Incoming {
                header,
                entries: Vec::new(),
            });
        } else {
            let entry: Entry = serde_json::from_value(value)
                .with_context(|| format!("line {}: not a transcript entry", n + 1))?;
            match sessions.last_mut() {
                Some(s) => s.entries.push(entry),
                None => bail!("line {}: an entry before any session header", n + 1),
            }
        }
    }
    let (mut added, mut present, mut entries) = (0, 0, 0);
    for s in sessions {
        let count = s.entries.len();
        let id = format!("{}/{}", s.header.agent_id, s.header.id);
        if store
            .import(s.header, s.entries)
            .with_context(|| format!("importing {id}"))?
        {
            added += 1;
            entries += count;
        } else {
            esay!("{id} is already in the store; left as it is");
            present += 1;
        }
    }
    esay!(
        "imported {added} sessions ({entries} entries) into {}; {present} already there",
        store.describe()
    );
    Ok(())
}
