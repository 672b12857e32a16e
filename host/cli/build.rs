//! Packs the SDK sources (`sdk/rust`, `sdk/python`, `sdk/js`) into one tar
//! the binary carries (`src/sdk.rs` unpacks it), so plugin authors need
//! neither this checkout nor a registry that has no clawhost SDK.

use std::error::Error;
use std::path::{Path, PathBuf};

/// Directories that are build output or installed dependencies, not SDK.
const SKIPPED: [&str; 5] = [
    "node_modules",
    "target",
    "__pycache__",
    ".mypy_cache",
    "build",
];

fn main() -> Result<(), Box<dyn Error>> {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk");
    println!("cargo:rerun-if-changed={}", sdk.display());
    let mut files = Vec::new();
    for lang in ["rust", "python", "js"] {
        collect(&sdk.join(lang), &mut files)?;
    }
    files.sort();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo sets OUT_DIR")?);
    let archive = std::fs::File::create(out.join("sdk.tar"))?;
    let mut tar = tar::Builder::new(archive);
    for path in files {
        let name = path.strip_prefix(&sdk)?;
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Fixed metadata: the same sources give the same archive, and so
        // the same unpacked directory name.
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, name, bytes.as_slice())?;
    }
    tar.finish()?;
    Ok(())
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), Box<dyn Error>> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with('.') || name.ends_with(".egg-info") {
            continue;
        }
        if entry.file_type()?.is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                collect(&path, files)?;
            }
        } else {
            files.push(path);
        }
    }
    Ok(())
}
