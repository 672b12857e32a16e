//! On-disk cache of compiled components, keyed by the component's sha256 and
//! the engine's compatibility hash, so start-up does not recompile.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::Engine;

/// A directory of serialized components.
pub struct ComponentCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Deserialized from the cache.
    Hit,
    /// Compiled (and written to the cache when one is configured).
    Compiled,
}

fn engine_key(engine: &Engine) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

impl ComponentCache {
    /// A cache in `dir`, or no caching when `None`.
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            engine_key: engine_key(engine),
        }
    }

    /// The default cache directory: `$XDG_CACHE_HOME/clawhost/components`,
    /// else `~/.cache/clawhost/components`.
    pub fn default_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
        Some(base.join("clawhost").join("components"))
    }

    fn path(&self, sha256: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{}.cwasm", self.engine_key)))
    }

    /// Load a component: from the cache when present and valid, else compile
    /// `bytes` and store the result.
    pub fn load(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let path = self.path(sha256);
        if let Some(path) = path.as_ref().filter(|p| p.is_file()) {
            // SAFETY: the cache directory belongs to the operator; files are
            // written only by `store` below with this engine's compatibility key,
            // and wasmtime checks the header and engine settings again.
            match unsafe { Component::deserialize_file(engine, path) } {
                Ok(component) => return Ok((component, CacheOutcome::Hit)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "ignoring unusable cached component")
                }
            }
        }
        let component = Component::new(engine, bytes)?;
        if let Some(path) = path {
            if let Err(e) = store(&path, &component) {
                tracing::warn!(path = %path.display(), error = %e, "could not cache compiled component");
            }
        }
        Ok((component, CacheOutcome::Compiled))
    }
}

fn store(path: &Path, component: &Component) -> anyhow::Result<()> {
    let bytes = component.serialize()?;
    let dir = path.parent().expect("cache path has a parent");
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, &bytes)?;
    tmp.persist(path)?;
    Ok(())
}
