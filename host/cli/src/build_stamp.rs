//! Whether a plugin package's build is up to date: a digest of everything
//! the build reads (the package's sources, the SDK it builds against, the
//! toolchain's version) recorded beside the digest of the component it gave,
//! in `$XDG_CACHE_HOME/clawhost/builds/`. An unchanged package is not built
//! again, so its component keeps its bytes and the compile cache hits.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Names inside a package that builds write, not sources.
pub fn is_output(name: &str) -> bool {
    matches!(
        name,
        "target"
            | "node_modules"
            | "__pycache__"
            | ".mypy_cache"
            | ".git"
            | ".venv"
            | ".clawhost-build"
            | ".install.lock"
            | "plugin.wasm"
            | "dist"
            | "build"
    ) || name.ends_with(".wasm")
        || name.ends_with(".partial")
        || name.ends_with(".egg-info")
}

/// Feed every source file under `dir` (path relative to `root`, length and
/// bytes) to `hash`, in name order.
fn hash_tree(root: &Path, dir: &Path, hash: &mut Sha256) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if is_output(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            hash_tree(root, &path, hash)?;
        } else {
            let bytes = std::fs::read(&path)?;
            let name = path.strip_prefix(root).unwrap_or(&path);
            hash.update(name.to_string_lossy().as_bytes());
            hash.update([0]);
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(&bytes);
        }
    }
    Ok(())
}

/// The digest of a build's inputs: the package in `dir`, the SDK sources in
/// `sdk`, and `toolchain` (the compiler's version line).
pub fn inputs(dir: &Path, sdk: &Path, toolchain: &str) -> std::io::Result<String> {
    let mut hash = Sha256::new();
    hash.update(concat!("clawhost ", env!("CARGO_PKG_VERSION"), "\0"));
    hash.update(toolchain.as_bytes());
    hash.update([0]);
    hash_tree(dir, dir, &mut hash)?;
    hash.update([0xff]);
    hash_tree(sdk, sdk, &mut hash)?;
    Ok(hex::encode(hash.finalize()))
}

/// The stamp file of the package in `dir`.
fn stamp_path(dir: &Path) -> Option<PathBuf> {
    let key = hex::encode(Sha256::digest(dir.to_string_lossy().as_bytes()));
    clawhost_config::xdg_dir("XDG_CACHE_HOME", ".cache")
        .map(|cache| cache.join("builds").join(format!("{}.json", &key[..32])))
}

/// Whether `component` is what a build of exactly `inputs` gave.
pub fn is_current(dir: &Path, inputs: &str, component: &Path) -> bool {
    let Some(stamp) = stamp_path(dir).and_then(|p| std::fs::read(p).ok()) else {
        return false;
    };
    let Ok(stamp) = serde_json::from_slice::<serde_json::Value>(&stamp) else {
        return false;
    };
    stamp["inputs"] == inputs
        && std::fs::read(component)
            .is_ok_and(|bytes| stamp["component"] == hex::encode(Sha256::digest(bytes)))
}

/// Record that a build of `inputs` gave `component` (best effort: without
/// a stamp the next build simply runs).
pub fn record(dir: &Path, inputs: &str, component: &Path) {
    let (Some(path), Ok(bytes)) = (stamp_path(dir), std::fs::read(component)) else {
        return;
    };
    let stamp = serde_json::json!({
        "package": dir,
        "inputs": inputs,
        "component": hex::encode(Sha256::digest(bytes)),
    });
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    if std::fs::write(&tmp, stamp.to_string()).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}
