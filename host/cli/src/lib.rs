//! The clawhost command line, as a library so tests can drive the same code.

pub mod build;
pub mod demo;
pub mod run;
pub mod sessions;
pub mod transcript;
