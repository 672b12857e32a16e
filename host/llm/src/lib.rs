//! Model access for the host: the provider registry and its transports
//! (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, each
//! streamed over SSE), model runtime generations, config reload, and the
//! scripted offline provider. Plugins never see this crate's credentials or
//! sockets.

pub mod auth;
pub mod generation;
pub mod http_client;
mod model_ref;
pub mod providers;
pub mod registry;
pub mod reload;
pub mod scripted;
pub mod stream;
pub mod transport;

pub use auth::{AuthSource, AuthTemplate, Secret};
pub use generation::{GenerationError, GenerationSet, ModelRuntimeGeneration, ModelRuntimes};
pub use model_ref::{BadModelRef, ModelRef};
pub use registry::{CatalogEntry, ModelRegistry, ProviderEntry, RegistryError};
pub use scripted::{ScriptStep, ScriptedModel, ScriptedToolCall};
pub use stream::{Assembler, EventParser, StreamEvent};
