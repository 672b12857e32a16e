//! Sessions: persistent, append-only JSONL transcripts per agent (a header,
//! then entries linked by `id`/`parentId` into a tree), a small index for fast
//! listing, forks, and per-session lanes that serialize runs on one session.

mod entry;
mod index;
mod lanes;
mod private;
mod store;
mod transcript;

pub use entry::{Entry, EntryBody, Header, TRANSCRIPT_VERSION};
pub use index::IndexEntry;
pub use lanes::SessionLanes;
pub use store::{SessionError, SessionStore};
pub use transcript::Transcript;

#[cfg(test)]
mod fuzz_tests;
