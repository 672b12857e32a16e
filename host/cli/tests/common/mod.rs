//! What the binary tests share: the built plugin packages and a config
//! writer that points the component cache at the repository's.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The plugin packages, built from source once per test binary.
#[allow(dead_code)]
pub fn plugins() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        clawhost::build::build_plugins(None).expect("building the plugins from source")
    })
    .clone()
}

/// Write `config` to `dir/clawhost.json`, with the shared compiled-component
/// cache and key filled into its `plugins` section and the `echo` fixture
/// tool offered (unless `tools.testFixtures` is given); returns the path.
#[allow(dead_code)]
pub fn write_config(dir: &Path, mut config: Value) -> PathBuf {
    if config["tools"]["testFixtures"].is_null() {
        config["tools"]["testFixtures"] = true.into();
    }
    let target = clawhost::build::repo_root().join("target");
    let plugins = config["plugins"]
        .as_object_mut()
        .expect("a plugins section");
    plugins.insert(
        "cacheDir".into(),
        target.join("component-cache").to_string_lossy().into(),
    );
    plugins.insert(
        "cacheKeyFile".into(),
        target.join("component-cache.key").to_string_lossy().into(),
    );
    let path = dir.join("clawhost.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// A config in `dir` (written by [`write_config`]) whose scripted model
/// plays `script` (written to `dir/script.json`), no plugins configured
/// and no fixture tools; returns its path.
#[allow(dead_code)]
pub fn scripted_config(dir: &Path, script: Value) -> PathBuf {
    std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
    write_config(
        dir,
        serde_json::json!({
            "plugins": {},
            "tools": {"testFixtures": false},
            "models": {"providers": {"scripted": {"api": "scripted", "script": "script.json"}}},
            "agents": {"defaults": {"model": "scripted/test"}}
        }),
    )
}

/// The binary, run in `dir` with no config, log filter or user config dir
/// from the environment, and no colour.
#[allow(dead_code)] // not every test binary uses every helper
pub fn clawhost(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clawhost"));
    cmd.current_dir(dir)
        .env_remove("CLAWHOST_CONFIG")
        .env_remove("CLAWHOST_LOG")
        .env_remove("RUST_LOG")
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        // The SDKs the binary carries, unpacked (and their build tools
        // installed) once for all tests.
        .env(
            "XDG_DATA_HOME",
            clawhost::build::repo_root().join("target/test-sdk"),
        )
        .env("NO_COLOR", "1");
    cmd
}

/// Run `cmd`: whether it succeeded, its stdout and its stderr.
#[allow(dead_code)]
pub fn outcome(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
