//! Sessions: persistent, append-only transcripts per agent (a header, then
//! entries linked by `id`/`parentId` into a tree) kept in JSONL files or a
//! database behind one [`SessionStore`], an index for fast listing, forks,
//! and per-session lanes that serialize runs on one session (across
//! processes when the store is shared).

mod backend;
mod entry;
mod error;
mod files;
mod index;
mod lanes;
mod private;
mod store;
mod transcript;

pub use backend::{ApprovalRelay, Backend, BoxFuture, LaneLock};
pub use entry::{Entry, EntryBody, Header, TRANSCRIPT_VERSION};
pub use error::SessionError;
pub use files::{check_id, FileBackend};
pub use index::IndexEntry;
pub use lanes::{Lane, SessionLanes};
pub use store::SessionStore;
pub use transcript::Transcript;

#[cfg(test)]
mod fuzz_tests;
