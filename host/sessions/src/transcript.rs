//! One session's transcript file: loading (with torn-line recovery),
//! appending, durable sync, and the context along the active branch.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use clawhost_agent_core::{Message, SharedMessage};

use crate::entry::{Entry, EntryBody, Header};
use crate::SessionError;

/// Where a transcript's entries go.
#[derive(Debug)]
enum Sink {
    /// A JSONL file: each entry is written as it is appended.
    File {
        path: PathBuf,
        /// Open for appending; `None` when opened read-only.
        file: Option<File>,
    },
    /// Rows of a database: entries wait in memory for the next commit.
    Rows {
        /// Whether appending is allowed (not opened read-only).
        writable: bool,
    },
}

/// An open transcript.
#[derive(Debug)]
pub struct Transcript {
    sink: Sink,
    header: Header,
    entries: Vec<Entry>,
    leaf: Option<String>,
    warnings: Vec<String>,
    /// Positions in `entries` of the branch from the root to the leaf, kept
    /// as entries are appended (each turn walks it several times; building
    /// it from parent links each time made a turn's cost grow with history).
    branch: Vec<usize>,
    /// What is stored as this transcript knows it: for a file, its bytes
    /// (read plus appended); for rows, the entries committed. A kept-open
    /// transcript whose store says otherwise was changed by someone else
    /// and is read again.
    stored: u64,
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

/// What loading found at the end of the file.
struct Loaded {
    /// The final line, when it does not parse.
    torn: Option<Torn>,
    /// The final line parsed but has no newline.
    missing_newline: bool,
}

/// A torn final line.
struct Torn {
    line: usize,
    offset: usize,
    reason: String,
}

impl Transcript {
    /// Create a new transcript file with its header (fails if it exists).
    /// Not synced here: the store commits a new session at once, which
    /// fsyncs it when the store does (one fsync, not two; none when turned
    /// off).
    pub(crate) fn create(path: &Path, header: Header) -> Result<Self, SessionError> {
        let io = |e| SessionError::io(path, e);
        let mut file = crate::private::file_options()
            .create_new(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let mut line = serde_json::to_string(&header).map_err(|e| io(e.into()))?;
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(io)?;
        Ok(Self {
            sink: Sink::File {
                path: path.into(),
                file: Some(file),
            },
            header,
            entries: Vec::new(),
            leaf: None,
            warnings: Vec::new(),
            branch: Vec::new(),
            stored: line.len() as u64,
        })
    }

    /// Open a transcript to append to. The file is never rewritten: a final
    /// line that parses but lacks its newline is a complete entry (the newline
    /// is added before the next one); a torn final line is refused with a
    /// pointer to `clawhost sessions repair`, which keeps a backup.
    pub(crate) fn open(path: &Path) -> Result<Self, SessionError> {
        let (mut t, loaded) = Self::load(path)?;
        if let Some(torn) = loaded.torn {
            return Err(SessionError::NeedsRepair {
                path: path.into(),
                line: torn.line,
                reason: torn.reason,
            });
        }
        let io = |e| SessionError::io(path, e);
        let mut file = OpenOptions::new().append(true).open(path).map_err(io)?;
        crate::private::tighten(&file).map_err(io)?;
        if loaded.missing_newline {
            writeln!(file).map_err(io)?;
            t.stored += 1;
        }
        t.sink = Sink::File {
            path: path.into(),
            file: Some(file),
        };
        Ok(t)
    }

    /// Load a transcript without writing to it, ever: a torn final line is
    /// skipped with a warning.
    pub(crate) fn open_read_only(path: &Path) -> Result<Self, SessionError> {
        let (mut t, loaded) = Self::load(path)?;
        if let Some(torn) = loaded.torn {
            let warning = format!(
                "{}:{}: skipped a torn last line ({}); `clawhost sessions repair` cuts it off, keeping a backup",
                path.display(),
                torn.line,
                torn.reason
            );
            tracing::debug!("{warning}");
            t.warnings.push(warning);
        }
        Ok(t)
    }

    /// Cut a torn final line off, after copying the file to
    /// `<file>.bak-<millis>`. Returns the backup's path, or `None` when
    /// nothing needed repair.
    pub(crate) fn repair(path: &Path) -> Result<Option<PathBuf>, SessionError> {
        let (_, loaded) = Self::load(path)?;
        let Some(torn) = loaded.torn else {
            return Ok(None);
        };
        let io = |e| SessionError::io(path, e);
        let backup = path.with_extension(format!("jsonl.bak-{}", now_ms()));
        let mut from = File::open(path).map_err(io)?;
        let mut to = crate::private::file_options()
            .create_new(true)
            .write(true)
            .open(&backup)
            .map_err(io)?;
        std::io::copy(&mut from, &mut to).map_err(io)?;
        let file = OpenOptions::new().write(true).open(path).map_err(io)?;
        file.set_len(torn.offset as u64).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(Some(backup))
    }

    /// Parse the whole file. Line numbers are the file's own (1-based,
    /// blank lines counted). A malformed line that is not the last one is an
    /// error; the last one is reported as torn.
    fn load(path: &Path) -> Result<(Self, Loaded), SessionError> {
        let io = |e| SessionError::io(path, e);
        let bytes = std::fs::read(path).map_err(io)?;
        let corrupt = |line: usize, reason: String| SessionError::Corrupt {
            path: path.into(),
            line,
            reason,
        };
        let mut lines: Vec<(usize, usize, &[u8])> = Vec::new(); // (number, offset, bytes)
        let mut offset = 0;
        for (i, raw) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
            lines.push((i + 1, offset, raw));
            offset += raw.len();
        }
        let missing_newline = bytes.last().is_some_and(|b| *b != b'\n');
        let last_number = lines.last().map_or(0, |l| l.0);
        let mut header: Option<Header> = None;
        let mut entries = Vec::new();
        let mut torn = None;
        for (number, offset, raw) in lines {
            let text = match std::str::from_utf8(raw) {
                Ok(text) => text.trim_end_matches(['\n', '\r']),
                Err(e) if number == last_number => {
                    torn = Some(Torn {
                        line: number,
                        offset,
                        reason: e.to_string(),
                    });
                    break;
                }
                Err(e) => return Err(corrupt(number, e.to_string())),
            };
            if text.trim().is_empty() {
                continue;
            }
            let parsed = match &header {
                None => serde_json::from_str::<Header>(text).map(|h| header = Some(h)),
                Some(_) => serde_json::from_str::<Entry>(text).map(|e| entries.push(e)),
            };
            if let Err(e) = parsed {
                if number == last_number && header.is_some() {
                    torn = Some(Torn {
                        line: number,
                        offset,
                        reason: e.to_string(),
                    });
                    break;
                }
                return Err(corrupt(number, e.to_string()));
            }
        }
        let header = header.ok_or_else(|| corrupt(1, "no header".into()))?;
        if header.version > crate::TRANSCRIPT_VERSION {
            return Err(corrupt(
                1,
                format!(
                    "transcript version {} is newer than this host's {}",
                    header.version,
                    crate::TRANSCRIPT_VERSION
                ),
            ));
        }
        let leaf = entries.last().map(|e: &Entry| e.id.clone());
        let loaded = Loaded {
            missing_newline: missing_newline && torn.is_none(),
            torn,
        };
        let mut t = Self {
            sink: Sink::File {
                path: path.into(),
                file: None,
            },
            header,
            entries,
            leaf,
            warnings: Vec::new(),
            branch: Vec::new(),
            stored: bytes.len() as u64,
        };
        t.branch = t.walk_branch();
        Ok((t, loaded))
    }

    /// A transcript kept as database rows: its header and its stored
    /// entries (in the order they were appended), all of them committed.
    /// Refused like a file: a header from a newer version.
    pub fn from_rows(
        header: Header,
        entries: Vec<Entry>,
        writable: bool,
    ) -> Result<Self, SessionError> {
        if header.version > crate::TRANSCRIPT_VERSION {
            return Err(SessionError::Store(format!(
                "session `{}`: transcript version {} is newer than this host's {}",
                header.id,
                header.version,
                crate::TRANSCRIPT_VERSION
            )));
        }
        let mut t = Self {
            sink: Sink::Rows { writable },
            leaf: entries.last().map(|e| e.id.clone()),
            stored: entries.len() as u64,
            header,
            entries,
            warnings: Vec::new(),
            branch: Vec::new(),
        };
        t.branch = t.walk_branch();
        Ok(t)
    }

    /// Entries appended since the last commit (rows only; a file's are
    /// written as they are appended).
    pub fn unstored(&self) -> &[Entry] {
        match self.sink {
            Sink::Rows { .. } => &self.entries[(self.stored as usize).min(self.entries.len())..],
            Sink::File { .. } => &[],
        }
    }

    /// What the store holds of this transcript as it knows it: bytes of a
    /// file, committed entries of rows.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// Rows: everything appended is now committed.
    pub fn mark_stored(&mut self) {
        if let Sink::Rows { .. } = self.sink {
            self.stored = self.entries.len() as u64;
        }
    }

    /// Add an entry as it was recorded elsewhere (its id, parent and time
    /// kept): an import. Becomes the leaf.
    pub fn push_recorded(&mut self, entry: Entry) -> Result<(), SessionError> {
        self.write_entry(&entry)?;
        let follows_leaf = entry.parent_id == self.leaf;
        self.leaf = Some(entry.id.clone());
        self.entries.push(entry);
        if follows_leaf {
            self.branch.push(self.entries.len() - 1);
        } else {
            self.branch = self.walk_branch();
        }
        Ok(())
    }

    /// The first user message, shortened: the session's title.
    pub fn title(&self) -> String {
        self.entries
            .iter()
            .find_map(|e| match e.body.message() {
                Some(Message::User { text, .. }) => Some(text.chars().take(60).collect()),
                _ => None,
            })
            .unwrap_or_default()
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

    /// The file, for a transcript kept in one.
    pub fn path(&self) -> Option<&Path> {
        match &self.sink {
            Sink::File { path, .. } => Some(path),
            Sink::Rows { .. } => None,
        }
    }

    /// Where the transcript is, for messages: its file or `agent/session`.
    fn place(&self) -> PathBuf {
        match &self.sink {
            Sink::File { path, .. } => path.clone(),
            Sink::Rows { .. } => {
                PathBuf::from(format!("{}/{}", self.header.agent_id, self.header.id))
            }
        }
    }

    /// The error for a write to a transcript opened read-only.
    fn read_only(&self) -> SessionError {
        SessionError::ReadOnly { path: self.place() }
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
        self.branch = self.walk_branch();
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
        self.write_entry(&entry)?;
        self.leaf = Some(entry.id.clone());
        let id = entry.id.clone();
        self.branch.push(self.entries.len());
        self.entries.push(entry);
        Ok(id)
    }

    /// Append a conversation message.
    pub fn append_message(&mut self, message: Message) -> Result<String, SessionError> {
        self.append(EntryBody::from_message(message))
    }

    /// A file: write the entry's line now. Rows: only check the transcript
    /// takes entries (they are stored at the commit).
    fn write_entry(&mut self, entry: &Entry) -> Result<(), SessionError> {
        match &mut self.sink {
            Sink::Rows { writable: true } => Ok(()),
            Sink::Rows { writable: false } | Sink::File { file: None, .. } => Err(self.read_only()),
            Sink::File {
                path,
                file: Some(file),
            } => {
                let mut line =
                    serde_json::to_string(entry).map_err(|e| SessionError::io(path, e.into()))?;
                line.push('\n');
                file.write_all(line.as_bytes())
                    .map_err(|e| SessionError::io(path, e))?;
                self.stored += line.len() as u64;
                Ok(())
            }
        }
    }

    /// A file: hand everything written so far to the kernel, and with
    /// `durable` make it durable (fsync). Rows: nothing to do.
    pub(crate) fn flush(&mut self, durable: bool) -> Result<(), SessionError> {
        match &mut self.sink {
            Sink::Rows { .. } => Ok(()),
            Sink::File { file: None, .. } => Err(self.read_only()),
            Sink::File {
                path,
                file: Some(file),
            } => file
                .flush()
                .and_then(|()| if durable { file.sync_data() } else { Ok(()) })
                .map_err(|e| SessionError::io(path, e)),
        }
    }

    /// Entries from the root to the leaf, starting after the last `reset`.
    pub fn branch(&self) -> Vec<&Entry> {
        let mut branch: Vec<&Entry> = self.branch_back().collect();
        branch.reverse();
        branch
    }

    /// The branch from the leaf back to the latest reset (excluded): what
    /// [`Self::branch`] holds, latest first, without collecting it.
    pub fn branch_back(&self) -> impl Iterator<Item = &Entry> {
        self.branch
            .iter()
            .rev()
            .map(|&i| &self.entries[i])
            .take_while(|e| !matches!(&e.body, EntryBody::Custom { custom_type, .. } if custom_type == "reset"))
    }

    /// Every entry from the root to the leaf.
    pub fn full_branch(&self) -> Vec<&Entry> {
        self.branch.iter().map(|&i| &self.entries[i]).collect()
    }

    /// Walk parent links from the leaf to the root: the branch's positions.
    fn walk_branch(&self) -> Vec<usize> {
        let by_id: std::collections::HashMap<&str, usize> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();
        let mut path = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = self.leaf.as_deref();
        while let Some(&i) = cursor.and_then(|id| by_id.get(id)) {
            let entry = &self.entries[i];
            if !seen.insert(entry.id.as_str()) {
                break; // a parent cycle in a hand-edited file: each entry once
            }
            path.push(i);
            cursor = entry.parent_id.as_deref();
        }
        path.reverse();
        path
    }

    /// The model context along the branch: the latest compaction's summary
    /// (as a user message) then the messages from its first kept entry on.
    pub fn context(&self) -> Vec<Message> {
        self.shared_context()
            .into_iter()
            .map(SharedMessage::into_inner)
            .collect()
    }

    /// [`Self::context`], its messages shared with this transcript's entries.
    pub fn shared_context(&self) -> Vec<SharedMessage> {
        let branch = self.branch();
        let last_compaction = branch
            .iter()
            .enumerate()
            .rev()
            .find_map(|(at, e)| match &e.body {
                EntryBody::Compaction {
                    summary,
                    first_kept_entry_id,
                    ..
                } => Some((at, summary, first_kept_entry_id)),
                _ => None,
            });
        let Some((at, summary, first_kept_entry_id)) = last_compaction else {
            return branch
                .iter()
                .filter_map(|e| e.body.shared_message().cloned())
                .collect();
        };
        let first_kept = branch
            .iter()
            .position(|e| e.id == *first_kept_entry_id)
            .unwrap_or(at);
        let mut out = vec![SharedMessage::from(Message::user(format!(
            "[Summary of the earlier conversation]\n{summary}"
        )))];
        out.extend(
            branch[first_kept..]
                .iter()
                .filter(|e| !matches!(e.body, EntryBody::Compaction { .. }))
                .filter_map(|e| e.body.shared_message().cloned()),
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
        self.branch_back().find_map(|e| match &e.body {
            EntryBody::Runtime { runtime, reason } => Some((runtime.clone(), reason.clone())),
            _ => None,
        })
    }
}
