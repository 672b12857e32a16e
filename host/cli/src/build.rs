//! Building the first-party plugins from source (`plugins/build.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// The repository root this binary was built from (where `plugins/` lives);
/// it may no longer exist where the binary runs: see [`source_checkout`].
pub fn repo_root() -> PathBuf {
    // host/cli sits two levels below the repository root.
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .nth(2)
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

/// The clawhost source checkout to build the example plugins from and to
/// point new plugins' SDK dependencies at: `$CLAWHOST_SOURCE_DIR`, else the
/// checkout this binary was built from; `None` when it holds no
/// `plugins/build.sh` (an installed binary whose checkout is gone).
pub fn source_checkout() -> Option<PathBuf> {
    let root = std::env::var_os("CLAWHOST_SOURCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(repo_root);
    root.join("plugins")
        .join("build.sh")
        .is_file()
        .then_some(root)
}

/// Build every plugin in `plugins/` into `out` (default `target/plugins`) and
/// return the directory of plugin packages. `CLAWHOST_PLUGINS_DIR` names a
/// directory of already built packages and skips the build.
pub fn build_plugins(out: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAWHOST_PLUGINS_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let Some(root) = source_checkout() else {
        bail!(
            "the example plugins are built from the clawhost source, and no checkout is here \
             (this binary was built from {}; set CLAWHOST_SOURCE_DIR to a checkout), or pass \
             already built packages: build them in a checkout with `plugins/build.sh DIR` \
             (or `clawhost build-plugins --out DIR`), then `--plugins-dir DIR` or \
             CLAWHOST_PLUGINS_DIR=DIR",
            repo_root().display()
        );
    };
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
