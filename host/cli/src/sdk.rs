//! The SDKs this binary carries. `build.rs` packs `sdk/rust`, `sdk/python`
//! and `sdk/js` into the binary; the first command that needs them unpacks
//! them into `$XDG_DATA_HOME/clawhost/sdk/<api version>-<digest>/`, where new
//! plugins depend on them by path. No registry has a clawhost SDK yet, and
//! the sources always match the API this binary loads.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use clawhost_plugin_runtime::CURRENT_API;
use sha2::Digest;

use crate::toolchain::{install_hint, on_path, Tool};

/// The SDK sources (`rust/…`, `python/…`, `js/…`) as a tar.
static ARCHIVE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sdk.tar"));

/// Marks a completely unpacked SDK directory.
const COMPLETE: &str = ".complete";

/// The SDK directory (holding `rust/`, `python/`, `js/`) new plugins build
/// against: `$CLAWHOST_SOURCE_DIR/sdk` when that names a checkout (working on
/// the SDK itself), else the SDK this binary carries, unpacked once.
pub fn sdk_root() -> anyhow::Result<PathBuf> {
    if let Some(root) = std::env::var_os("CLAWHOST_SOURCE_DIR") {
        let sdk = PathBuf::from(root).join("sdk");
        if sdk.join("rust").join("Cargo.toml").is_file() {
            return Ok(std::path::absolute(sdk)?);
        }
    }
    let base = clawhost_config::xdg_dir("XDG_DATA_HOME", ".local/share")
        .context("no home directory (HOME or XDG_DATA_HOME) to unpack the SDKs into")?
        .join("sdk");
    unpack(&base)
}

/// The directory name of this binary's SDK: its API version and the
/// archive's digest, so binaries with other SDK sources never share one.
fn dir_name() -> String {
    let digest = hex::encode(sha2::Sha256::digest(ARCHIVE));
    format!("{CURRENT_API}-{}", &digest[..12])
}

/// Unpack the carried SDK under `base` unless it is there already. Racing
/// processes each unpack into a temporary directory and rename it into
/// place; the loser's copy is dropped.
fn unpack(base: &Path) -> anyhow::Result<PathBuf> {
    let dir = base.join(dir_name());
    if dir.join(COMPLETE).is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(base).with_context(|| format!("creating {}", base.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".unpacking-")
        .tempdir_in(base)
        .with_context(|| format!("unpacking the SDKs into {}", base.display()))?;
    tar::Archive::new(ARCHIVE)
        .unpack(tmp.path())
        .with_context(|| format!("unpacking the SDKs into {}", tmp.path().display()))?;
    std::fs::write(tmp.path().join(COMPLETE), CURRENT_API)?;
    match std::fs::rename(tmp.path(), &dir) {
        Ok(()) => {
            let _ = tmp.keep();
        }
        // Another process put a complete copy there first: use it.
        Err(_) if dir.join(COMPLETE).is_file() => {}
        Err(e) => return Err(e).with_context(|| format!("moving the SDKs to {}", dir.display())),
    }
    Ok(dir)
}

/// Make sure the JS SDK in `js` has its build tools (jco, from its lock
/// file), installing them with `npm ci` the first time.
pub fn js_build_tools(js: &Path) -> anyhow::Result<()> {
    let jco = js.join("node_modules/@bytecodealliance/jco/package.json");
    once(js, &|| jco.is_file(), &|| {
        if !on_path("npm") {
            bail!(
                "building JavaScript plugins needs Node.js and npm: {}",
                install_hint(Tool::Node)
            );
        }
        crate::progress::run(
            "installing the JS SDK's build tools (jco; once per SDK version)",
            Command::new("npm")
                .args(["ci", "--omit=dev", "--no-audit", "--no-fund"])
                .current_dir(js),
        )
        .map(drop)
    })
}

/// The Python SDK's `clawhost-py` in a virtual environment of its own
/// (`python/.venv`: the SDK and the componentize-py it pins), created with
/// `python3 -m venv` and pip the first time.
pub fn python_build_tools(python: &Path) -> anyhow::Result<PathBuf> {
    let venv = python.join(".venv");
    let build = venv.join("bin").join("clawhost-py");
    once(python, &|| build.is_file(), &|| {
        if !on_path("python3") {
            bail!(
                "building Python plugins needs Python 3: {}",
                install_hint(Tool::PythonVenv)
            );
        }
        let venv_made = Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv)
            .output()
            .context("running python3 -m venv")?;
        if !venv_made.status.success() {
            bail!(
                "python3 could not make a virtual environment ({}): {}\n{}",
                venv_made.status,
                install_hint(Tool::PythonVenv),
                String::from_utf8_lossy(&venv_made.stderr).trim()
            );
        }
        crate::progress::run(
            "installing the Python SDK and componentize-py (once per SDK version)",
            Command::new(venv.join("bin").join("pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .arg(python),
        )
        .map(drop)
    })?;
    Ok(build)
}

/// Run `install` unless `done`, holding a lock in `dir` so that one process
/// installs while the others wait and then find it done.
fn once(
    dir: &Path,
    done: &dyn Fn() -> bool,
    install: &dyn Fn() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if done() {
        return Ok(());
    }
    let lock = std::fs::File::create(dir.join(".install.lock"))
        .with_context(|| format!("locking {}", dir.display()))?;
    lock.lock()?;
    if !done() {
        install()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        tar::Archive::new(ARCHIVE)
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn the_archive_holds_each_sdk_and_nothing_built_or_installed() {
        let names = names();
        for needed in [
            "rust/Cargo.toml",
            "rust/src/lib.rs",
            "rust/wit/worlds.wit",
            "python/clawhost_sdk/build.py",
            "python/clawhost_sdk/wit/worlds.wit",
            "js/build.mjs",
            "js/package-lock.json",
            "js/src/index.js",
            "js/wit/worlds.wit",
        ] {
            assert!(names.iter().any(|n| n == needed), "{needed}: {names:?}");
        }
        for n in &names {
            assert!(
                !["node_modules", "target", "__pycache__"]
                    .iter()
                    .any(|skip| n.split('/').any(|part| part == *skip)),
                "{n}"
            );
        }
    }

    #[test]
    fn unpacking_is_done_once_and_survives_a_race() {
        let base = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = std::thread::scope(|s| {
            let racers: Vec<_> = (0..4).map(|_| s.spawn(|| unpack(base.path()))).collect();
            racers
                .into_iter()
                .map(|r| r.join().unwrap().unwrap())
                .collect()
        });
        assert!(dirs.iter().all(|d| d == &dirs[0]));
        let dir = &dirs[0];
        assert!(dir.join("rust/Cargo.toml").is_file());
        assert!(dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("{CURRENT_API}-")));
        // Only the one directory is left: the losers' copies are gone.
        let left: Vec<_> = std::fs::read_dir(base.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        // A second call finds it without unpacking again.
        std::fs::write(dir.join("rust/marker"), "kept").unwrap();
        assert_eq!(&unpack(base.path()).unwrap(), dir);
        assert!(dir.join("rust/marker").is_file());
    }
}
