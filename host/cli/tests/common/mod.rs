//! What the binary tests share: the built plugin packages and a config
//! writer that points the component cache at the repository's.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The plugin packages, built from source once per test binary.
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
