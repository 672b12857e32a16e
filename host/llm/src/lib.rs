//! Model access for the host: the scripted offline provider (and, in the
//! transport modules, real providers). Plugins never see this crate's
//! credentials or sockets.

pub mod scripted;

pub use scripted::{ScriptStep, ScriptedModel, ScriptedToolCall};
