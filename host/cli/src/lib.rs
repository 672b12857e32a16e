//! The clawhost command line, as a library so tests can drive the same code.
//!
//! Everything it prints goes through [`say!`] or [`esay!`], which escape
//! control and escape sequences: plugin and model text never drives the terminal.

/// `println!` with the text made terminal-safe.
#[macro_export]
macro_rules! say {
    () => { println!() };
    ($($arg:tt)*) => {
        println!("{}", $crate::clawhost_agent_core::text::terminal_safe(&format!($($arg)*)))
    };
}

/// `eprintln!` with the text made terminal-safe.
#[macro_export]
macro_rules! esay {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::clawhost_agent_core::text::terminal_safe(&format!($($arg)*)))
    };
}

#[doc(hidden)]
pub use clawhost_agent_core;

pub mod approve;
pub mod build;
pub mod demo;
pub mod run;
pub mod scaffold;
pub mod sessions;
pub mod transcript;
