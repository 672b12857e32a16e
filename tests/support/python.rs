//! Python for the tests that drive clawhost with official Python libraries
//! (the OpenAI client, the Prometheus parser): their pinned versions are
//! fetched from PyPI once into `target/test-python` and found there, so
//! `cargo test --workspace` needs no pip step of its own.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The Python packages the tests use, pinned.
pub const PACKAGES: [&str; 2] = ["openai==1.99.9", "prometheus-client==0.21.1"];

/// The directory holding [`PACKAGES`], installed on first use.
pub fn site() -> &'static PathBuf {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let root = clawhost::build::repo_root()
            .join("target")
            .join("test-python");
        let stamp = root.join(format!("installed-{}", PACKAGES.join("+")));
        if !stamp.exists() {
            let out = std::process::Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--target",
                ])
                .arg(&root)
                .args(PACKAGES)
                .output()
                .expect("python3 runs (the tests drive clawhost with Python clients)");
            assert!(
                out.status.success(),
                "installing {PACKAGES:?} into {} failed: {}",
                root.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(&stamp, "").expect("the install stamp is written");
        }
        root
    })
}

/// `python3` with [`PACKAGES`] importable.
pub fn command() -> std::process::Command {
    let mut cmd = std::process::Command::new("python3");
    cmd.env("PYTHONPATH", site());
    cmd
}
