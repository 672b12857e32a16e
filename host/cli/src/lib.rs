//! The clawhost command line, as a library so tests can drive the same code.
//!
//! Everything it prints goes through [`say!`] or [`esay!`], which escape
//! control and escape sequences: plugin and model text never drives the terminal.

/// `println!` with the text made terminal-safe.
#[macro_export]
macro_rules! say {
    () => { $crate::print_line("") };
    ($($arg:tt)*) => {
        $crate::print_line(&$crate::clawhost_agent_core::text::terminal_safe(&format!($($arg)*)))
    };
}

/// Print one line to stdout. A reader that went away (`clawhost sessions
/// list | head -1`) ends the program quietly, as a Unix tool does on SIGPIPE.
#[doc(hidden)]
pub fn print_line(line: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// Print text without a newline and flush it (streamed reply text); a
/// reader that went away ends the program quietly, as in [`print_line`].
#[doc(hidden)]
pub fn print_part(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
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

/// Whether stderr may carry colour and redrawn lines: it is a terminal and
/// `NO_COLOR` is unset (logs, spinners).
pub fn styled_stderr() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none()
}

pub mod approve;
pub mod build;
pub mod build_stamp;
pub mod config_cmd;
pub mod demo;
pub mod dev_plugins;
pub mod doctor;
pub mod gateway;
pub mod images;
pub mod input;
pub mod live;
pub mod mcp;
pub mod plugin_admin;
pub mod plugin_build;
pub mod plugin_oci;
pub mod plugin_report;
pub mod plugins;
pub mod progress;
pub mod run;
pub mod scaffold;
pub mod sdk;
pub mod sessions;
pub mod sessions_transfer;
pub mod telemetry;
pub mod toolchain;
pub mod transcript;
