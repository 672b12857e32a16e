//! One session's transcript file: loading (with torn-line recovery),
//! appending, durable sync, and the context along the active branch.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use clawhost_agent_core::Message;

use crate::entry::{Entry, EntryBody, Header};
use crate::SessionError;

/// An open transcript.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    file: File,
    header: Header,
    entries: Vec<Entry>,
    leaf: Option<String>,
    warnings: Vec<String>,
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

fn new_id() -> String {
    format!("{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

impl Transcript {
    /// Create a new transcript file with its header (fails if it exists).
    pub(crate) fn create(path: &Path, header: Header) -> Result<Self, SessionError> {
        let io = |e| SessionError::io(path, e);
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let line = serde_json::to_string(&header).expect("header serializes");
        writeln!(file, "{line}").map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(Self {
            path: path.into(),
            file,
            header,
            entries: Vec::new(),
            leaf: None,
            warnings: Vec::new(),
        })
    }

    /// Open and load a transcript. A torn last line (a crash mid-write) is
    /// skipped with a warning and cut off so new entries start on a clean line;
    /// a malformed line anywhere else is an error.
    pub(crate) fn open(path: &Path) -> Result<Self, SessionError> {
        let io = |e| SessionError::io(path, e);
        let bytes = std::fs::read(path).map_err(io)?;
        let mut warnings = Vec::new();
        let complete = match bytes.iter().rposition(|b| *b == b'\n') {
            Some(last_newline) => last_newline + 1,
            None => 0,
        };
        if complete < bytes.len() {
            let torn = bytes.len() - complete;
            let warning = format!(
                "{}: skipped a torn last line ({torn} bytes) left by an interrupted write",
                path.display()
            );
            tracing::warn!("{warning}");
            warnings.push(warning);
        }
        let text = std::str::from_utf8(&bytes[..complete]).map_err(|e| SessionError::Corrupt {
            path: path.into(),
            line: 0,
            reason: e.to_string(),
        })?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines.next().ok_or_else(|| SessionError::Corrupt {
            path: path.into(),
            line: 1,
            reason: "no header".into(),
        })?;
        let header: Header = serde_json::from_str(first).map_err(|e| SessionError::Corrupt {
            path: path.into(),
            line: 1,
            reason: e.to_string(),
        })?;
        if header.version > crate::TRANSCRIPT_VERSION {
            return Err(SessionError::Corrupt {
                path: path.into(),
                line: 1,
                reason: format!(
                    "transcript version {} is newer than this host's {}",
                    header.version,
                    crate::TRANSCRIPT_VERSION
                ),
            });
        }
        let mut entries = Vec::new();
        for (n, line) in lines {
            let entry: Entry = serde_json::from_str(line).map_err(|e| SessionError::Corrupt {
                path: path.into(),
                line: n + 1,
                reason: e.to_string(),
            })?;
            entries.push(entry);
        }
        let mut file = OpenOptions::new().write(true).open(path).map_err(io)?;
        if complete < bytes.len() {
            file.set_len(complete as u64).map_err(io)?;
            file.sync_data().map_err(io)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io)?;
        let leaf = entries.last().map(|e: &Entry| e.id.clone());
        Ok(Self {
            path: path.into(),
            file,
            header,
            entries,
            leaf,
            warnings,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// Every entry in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Warnings raised while loading (torn lines).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current leaf (the entry new ones follow).
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// Move the leaf to an existing entry (new entries branch from it).
    pub fn branch_from(&mut self, entry_id: &str) -> Result<(), SessionError> {
        if !self.entries.iter().any(|e| e.id == entry_id) {
            return Err(SessionError::NoEntry {
                session: self.header.id.clone(),
                entry: entry_id.into(),
            });
        }
        self.leaf = Some(entry_id.into());
        Ok(())
    }

    /// Append an entry after the leaf (written, not yet synced).
    pub fn append(&mut self, body: EntryBody) -> Result<String, SessionError> {
        let entry = Entry {
            id: new_id(),
            parent_id: self.leaf.clone(),
            at_ms: now_ms(),
            body,
        };
        let line = serde_json::to_string(&entry).expect("entry serializes");
        writeln!(self.file, "{line}").map_err(|e| SessionError::io(&self.path, e))?;
        self.leaf = Some(entry.id.clone());
        let id = entry.id.clone();
        self.entries.push(entry);
        Ok(id)
    }

    /// Append a conversation message.
    pub fn append_message(&mut self, message: Message) -> Result<String, SessionError> {
        self.append(EntryBody::from_message(message))
    }

    /// Make everything written so far durable (fsync).
    pub fn sync(&mut self) -> Result<(), SessionError> {
        self.file
            .flush()
            .and_then(|()| self.file.sync_data())
            .map_err(|e| SessionError::io(&self.path, e))
    }

    /// Entries from the root to the leaf, starting after the last `reset`.
    pub fn branch(&self) -> Vec<&Entry> {
        let full = self.full_branch();
        let after_reset = full
            .iter()
            .rposition(|e| matches!(&e.body, EntryBody::Custom { custom_type, .. } if custom_type == "reset"))
            .map_or(0, |i| i + 1);
        full[after_reset..].to_vec()
    }

    /// Every entry from the root to the leaf.
    pub fn full_branch(&self) -> Vec<&Entry> {
        let by_id: std::collections::HashMap<&str, &Entry> =
            self.entries.iter().map(|e| (e.id.as_str(), e)).collect();
        let mut path = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = self.leaf.as_deref();
        while let Some(entry) = cursor.and_then(|id| by_id.get(id)) {
            if !seen.insert(entry.id.as_str()) {
                break; // a parent cycle in a hand-edited file: each entry once
            }
            path.push(*entry);
            cursor = entry.parent_id.as_deref();
        }
        path.reverse();
        path
    }

    /// The model context along the branch: the latest compaction's summary
    /// (as a user message) then the messages from its first kept entry on.
    pub fn context(&self) -> Vec<Message> {
        let branch = self.branch();
        let last_compaction = branch
            .iter()
            .rposition(|e| matches!(e.body, EntryBody::Compaction { .. }));
        let Some(at) = last_compaction else {
            return branch
                .iter()
                .filter_map(|e| e.body.message().cloned())
                .collect();
        };
        let EntryBody::Compaction {
            summary,
            first_kept_entry_id,
            ..
        } = &branch[at].body
        else {
            unreachable!()
        };
        let first_kept = branch
            .iter()
            .position(|e| e.id == *first_kept_entry_id)
            .unwrap_or(at);
        let mut out = vec![Message::user(format!(
            "[Summary of the earlier conversation]\n{summary}"
        ))];
        out.extend(
            branch[first_kept..]
                .iter()
                .filter(|e| !matches!(e.body, EntryBody::Compaction { .. }))
                .filter_map(|e| e.body.message().cloned()),
        );
        out
    }

    /// Entry ids of the messages along the branch (parallel to the messages of
    /// the uncompacted branch).
    pub fn message_entry_ids(&self) -> Vec<String> {
        self.branch()
            .iter()
            .filter(|e| e.body.message().is_some())
            .map(|e| e.id.clone())
            .collect()
    }

    /// The runtime recorded along the branch (latest wins).
    pub fn runtime(&self) -> Option<String> {
        self.runtime_record().map(|(runtime, _)| runtime)
    }

    /// The runtime recorded along the branch and why it was selected.
    pub fn runtime_record(&self) -> Option<(String, String)> {
        self.branch().iter().rev().find_map(|e| match &e.body {
            EntryBody::Runtime { runtime, reason } => Some((runtime.clone(), reason.clone())),
            _ => None,
        })
    }
}
