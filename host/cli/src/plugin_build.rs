//! `clawhost plugin build [dir]`: build a plugin package with its language's
//! tools and stage the component where its manifest says, so the id lives
//! only in the manifest. The language is read from the package's files.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use clawhost_plugin_runtime::PluginPackage;

use crate::build_stamp;
use crate::toolchain::{install_hint, on_path, rust_route, RustRoute, Tool};

/// A package's language, as its files show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rust,
    Python,
    Js,
}

fn kind_of(dir: &Path) -> anyhow::Result<Kind> {
    if dir.join("Cargo.toml").is_file() {
        Ok(Kind::Rust)
    } else if dir.join("package.json").is_file() {
        Ok(Kind::Js)
    } else if dir.join("app.py").is_file() || dir.join("pyproject.toml").is_file() {
        Ok(Kind::Python)
    } else {
        bail!(
            "{}: no Cargo.toml, package.json or app.py: which language is this package in?",
            dir.display()
        )
    }
}

/// The cargo command that builds the Rust package in `dir` by [`rust_route`].
fn rust_command(dir: &Path, route: Option<RustRoute>) -> anyhow::Result<Command> {
    let mut cmd;
    match route {
        Some(RustRoute::Rustup) => {
            cmd = Command::new("cargo");
            cmd.args(["build", "--release", "--target", "wasm32-wasip2"]);
        }
        Some(RustRoute::DebianBuildStd) => {
            cmd = Command::new("/usr/bin/cargo");
            cmd.args(["build", "--release", "--target", "wasm32-wasip2"])
                .args(["-Zbuild-std=std,panic_abort", "--config"])
                .arg(r#"target.wasm32-wasip2.rustflags=["-L","native=/usr/lib/wasm32-wasi"]"#)
                .env("RUSTC", "/usr/bin/rustc")
                .env("RUSTC_BOOTSTRAP", "1")
                .env_remove("RUSTUP_TOOLCHAIN");
        }
        None => bail!(
            "no Rust toolchain builds wasm32-wasip2 here: {}",
            install_hint(Tool::RustWasm)
        ),
    }
    // One target dir for every plugin this user builds: dependencies, and
    // the standard library where it is built from source, compile once.
    if std::env::var_os("CARGO_TARGET_DIR").is_none() {
        if let Some(cache) = clawhost_config::xdg_dir("XDG_CACHE_HOME", ".cache") {
            cmd.env("CARGO_TARGET_DIR", cache.join("guest-target"));
        }
    }
    cmd.arg("--message-format=json-render-diagnostics")
        .current_dir(dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS");
    Ok(cmd)
}

/// The `.wasm` cargo reports building, from its JSON messages.
fn cargo_artifact(messages: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .flat_map(|m| {
            m["filenames"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
        })
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .rfind(|f| f.extension().is_some_and(|e| e == "wasm"))
}

/// The package's `scripts.build` words after `clawhost-js`, for building
/// with this binary's JS SDK when the package has no node_modules yet.
fn js_build_args(dir: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("package.json"))?;
    let package: serde_json::Value = serde_json::from_str(&text).context("package.json")?;
    let script = package["scripts"]["build"]
        .as_str()
        .context("package.json has no scripts.build")?;
    let words: Vec<&str> = script.split_whitespace().collect();
    match words.split_first() {
        Some((&"clawhost-js", rest)) => Ok(rest.iter().map(|w| w.to_string()).collect()),
        _ => bail!("scripts.build is not a `clawhost-js build …` command: run it yourself"),
    }
}

/// The version line of the compiler `kind` builds with (part of a build's
/// inputs; empty when it does not run, and the build will say why).
fn toolchain_version(kind: Kind, route: Option<RustRoute>) -> String {
    let (program, arg) = match kind {
        Kind::Rust if route == Some(RustRoute::DebianBuildStd) => ("/usr/bin/rustc", "-V"),
        Kind::Rust => ("rustc", "-V"),
        Kind::Python => ("python3", "--version"),
        Kind::Js => ("node", "--version"),
    };
    Command::new(program)
        .arg(arg)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Build the package in `dir` and stage its component, unless it is up to
/// date (its sources, the SDK and the compiler unchanged since the build
/// that gave its component) and `force` is false; returns the package.
pub fn build(dir: &Path, force: bool) -> anyhow::Result<PathBuf> {
    let dir = std::path::absolute(dir)?;
    let kind = kind_of(&dir)?;
    // The manifest first: a package without a valid one is not worth building.
    let manifest = PluginPackage::read(&dir).map_err(anyhow::Error::from)?;
    let id = manifest.manifest.id.clone();
    let component = manifest.component_path();
    let sdk = crate::sdk::sdk_root()?.join(match kind {
        Kind::Rust => "rust",
        Kind::Python => "python",
        Kind::Js => "js",
    });
    // The SDK's own build tools first: installing them writes into the SDK.
    let python_build = match kind {
        Kind::Rust => None,
        Kind::Python => Some(crate::sdk::python_build_tools(&sdk)?),
        Kind::Js => {
            crate::sdk::js_build_tools(&sdk)?;
            None
        }
    };
    // Found once: each look runs rustc.
    let route = (kind == Kind::Rust).then(rust_route).flatten();
    let toolchain = toolchain_version(kind, route);
    let inputs = build_stamp::inputs(&dir, &sdk, &toolchain)
        .with_context(|| format!("reading the sources of {}", dir.display()))?;
    if !force && build_stamp::is_current(&dir, &inputs, &component) {
        say!(
            "{id} {}: {} (up to date)",
            manifest.manifest.version,
            component.display()
        );
        return Ok(dir);
    }
    let what = format!("building {id}");
    match kind {
        Kind::Rust => {
            let out = crate::progress::run(&what, &mut rust_command(&dir, route)?)?;
            let artifact = cargo_artifact(&out).context("cargo reported no .wasm artifact")?;
            std::fs::copy(&artifact, &component).with_context(|| {
                format!("copying {} to {}", artifact.display(), component.display())
            })?;
        }
        Kind::Python => {
            let build = python_build.context("the Python SDK's clawhost-py")?;
            crate::progress::run(
                &what,
                Command::new(build).args(["build", "."]).current_dir(&dir),
            )?;
        }
        Kind::Js => {
            // The package's own install when it has one (`npm install`
            // links this SDK), else this binary's SDK directly.
            if !on_path("node") {
                bail!(
                    "building JavaScript plugins needs Node.js: {}",
                    install_hint(Tool::Node)
                );
            }
            let mut cmd = if dir.join("node_modules/.bin/clawhost-js").exists() {
                let mut cmd = Command::new("npm");
                cmd.args(["run", "build"]);
                cmd
            } else {
                let mut cmd = Command::new("node");
                cmd.arg(sdk.join("build.mjs")).args(js_build_args(&dir)?);
                cmd
            };
            crate::progress::run(&what, cmd.current_dir(&dir))?;
        }
    }
    let bytes = std::fs::metadata(&component)
        .with_context(|| format!("the build wrote no {}", component.display()))?
        .len();
    let header = std::fs::read(&component).map(|b| b.get(..8).map(<[u8]>::to_vec))?;
    // A component's preamble: `\0asm`, then layer 1 (a core module is layer 0).
    if header
        .as_deref()
        .is_none_or(|h| h[..4] != *b"\0asm" || h[6..8] != [1, 0])
    {
        bail!("{} is not a WebAssembly component", component.display());
    }
    // Stamped only when nothing changed while it built (an edit, or a
    // lock file the first build wrote): else the next build runs again.
    if build_stamp::inputs(&dir, &sdk, &toolchain).is_ok_and(|after| after == inputs) {
        build_stamp::record(&dir, &inputs, &component);
    }
    say!(
        "{id} {}: {} ({:.1} KiB)",
        manifest.manifest.version,
        component.display(),
        bytes as f64 / 1024.0
    );
    Ok(dir)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_last_wasm_artifact_is_the_component() {
        let messages = r#"{"reason":"compiler-artifact","filenames":["/t/libserde.rlib"]}
{"reason":"compiler-artifact","filenames":["/t/wasm32-wasip2/release/my_plugin.wasm"]}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            super::cargo_artifact(messages).unwrap(),
            std::path::Path::new("/t/wasm32-wasip2/release/my_plugin.wasm")
        );
        assert!(super::cargo_artifact("not json").is_none());
    }
}
