//! Building the first-party plugins from source (`plugins/build.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// The repository root (where `plugins/` lives).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli sits two levels below the repository root")
        .to_path_buf()
}

/// Build every plugin in `plugins/` into `out` (default `target/plugins`) and
/// return the directory of plugin packages. `CLAWHOST_PLUGINS_DIR` names a
/// directory of already built packages and skips the build.
pub fn build_plugins(out: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAWHOST_PLUGINS_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let root = repo_root();
    let script = root.join("plugins").join("build.sh");
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.join("target").join("plugins"));
    let output = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}):\n{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(out)
}
