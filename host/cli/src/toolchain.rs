//! The guest toolchains plugin builds use: whether each is here, and the
//! command that installs a missing one on this platform.

use std::path::Path;
use std::process::Command;

/// How Rust guests are built on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RustRoute {
    /// rustup's `wasm32-wasip2` target is installed: the ordinary build.
    Rustup,
    /// Debian's rustc with `-Zbuild-std`, its std sources and wasi-libc
    /// (what `plugins/build.sh` does where rustup cannot download targets).
    DebianBuildStd,
}

/// The route Rust guests can take here, if any.
pub fn rust_route() -> Option<RustRoute> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if sysroot.is_some_and(|s| Path::new(&s).join("lib/rustlib/wasm32-wasip2").is_dir()) {
        Some(RustRoute::Rustup)
    } else if Path::new("/usr/lib/wasm32-wasi").is_dir()
        && Path::new("/usr/lib/rustlib/src/rust/library").is_dir()
    {
        Some(RustRoute::DebianBuildStd)
    } else {
        None
    }
}

/// Whether `program` is on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
}

/// A guest tool a plugin build may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Node.js and npm (JavaScript and TypeScript plugins).
    Node,
    /// Python 3 with its `venv` module (Python plugins).
    PythonVenv,
    /// A Rust toolchain that builds `wasm32-wasip2` (Rust plugins).
    RustWasm,
}

/// The command that installs `tool` here: apt's packages on Debian and
/// Ubuntu, else the upstream instructions.
pub fn install_hint(tool: Tool) -> &'static str {
    let apt = Path::new("/etc/debian_version").is_file();
    match (tool, apt) {
        (Tool::Node, true) => "`sudo apt install nodejs npm`",
        (Tool::Node, false) => "install Node.js 18 or later with npm (https://nodejs.org)",
        (Tool::PythonVenv, true) => "`sudo apt install python3 python3-venv`",
        (Tool::PythonVenv, false) => "install Python 3.11 or later (https://python.org)",
        (Tool::RustWasm, true) if on_path("rustup") => "`rustup target add wasm32-wasip2`",
        (Tool::RustWasm, true) => {
            "`rustup target add wasm32-wasip2` (rustup: https://rustup.rs), or Debian's \
             `sudo apt install rustc-web cargo-web rust-web-src rust-web-llvm lld-22 wasi-libc`"
        }
        (Tool::RustWasm, false) => "`rustup target add wasm32-wasip2` (rustup: https://rustup.rs)",
    }
}
