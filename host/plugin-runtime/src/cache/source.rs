//! From a package's component file to a compiled [`Component`]: its digest
//! (remembered per file stamp), the operator's pin, the import precheck and
//! the compiled cache. An unchanged, pinned, cached component is neither
//! read nor hashed at start: its file is stat'ed and its artifact mapped,
//! and with a remembered declaration even the mapping waits for the
//! plugin's first use ([`LazyComponent`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wasmtime::component::Component;

use crate::admission;
use crate::api_version;
use crate::cache::{CacheOutcome, ComponentCache};
use crate::engine::PluginEngine;
use crate::manifest::{ComponentFileError, PluginPackage};
use crate::LoadError;
use clawhost_config::PluginsConfig;

/// A compiled component and what it took.
pub(crate) struct Acquired {
    /// The component.
    pub component: Component,
    /// Its sha256 (the one checked against the pin).
    pub sha256: String,
    /// From the cache or compiled.
    pub outcome: CacheOutcome,
}

/// The components a host has compiled or mapped, by sha256: packages with
/// identical components (copies, the same plugin under two ids) share one,
/// compiled once even when they load at the same time.
#[derive(Default)]
pub(crate) struct Shared {
    by_digest: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Component>>>>>,
}

impl Shared {
    /// The slot of `sha256`: locked while its component is being acquired.
    fn slot(&self, sha256: &str) -> Arc<tokio::sync::Mutex<Option<Component>>> {
        clawhost_agent_core::lock(&self.by_digest)
            .entry(sha256.to_string())
            .or_default()
            .clone()
    }
}

/// What [`acquire`] needs from the host.
pub(crate) struct Source<'a> {
    /// The engine components are compiled for.
    pub engine: &'a Arc<PluginEngine>,
    /// The compiled cache (and remembered digests).
    pub cache: &'a Arc<ComponentCache>,
    /// Compiles running at once are bounded by this.
    pub compiles: &'a tokio::sync::Semaphore,
    /// Pins and limits.
    pub config: &'a PluginsConfig,
    /// Components already acquired by this host.
    pub shared: &'a Shared,
}

async fn blocking<T: Send + 'static, E: std::fmt::Display + Send + 'static>(
    id: &str,
    stage: &'static str,
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, LoadError> {
    let runtime = |reason: String| LoadError::Runtime {
        id: id.into(),
        stage,
        reason,
    };
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| runtime(e.to_string()))?
        // `#`: an error's causes too (anyhow's chain).
        .map_err(|e| runtime(format!("{e:#}")))
}

/// The compiled component of `package` (whose id is `id`), its pin
/// checked. `remembered` is the digest remembered for the component file's
/// stamp, as [`crate::package_files`] read it. With `expected`, a file
/// whose digest is another one is refused before it is compiled.
pub(crate) async fn acquire(
    source: Source<'_>,
    id: &str,
    package: &PluginPackage,
    remembered: Result<Option<String>, ComponentFileError>,
    expected: Option<&str>,
) -> Result<Acquired, LoadError> {
    let max = source.config.limits.max_component_mb << 20;
    // Fast path: a remembered digest of the unchanged file, pinned, and a
    // verified artifact for it.
    let remembered = remembered.map_err(|e| LoadError::Runtime {
        id: id.into(),
        stage: "reading the component",
        reason: e.to_string(),
    })?;
    if let Some(sha256) = remembered.clone() {
        admission::check_pin(id, &sha256, source.config)?;
        let slot = source.shared.slot(&sha256);
        let mut slot = slot.lock().await;
        if let Some(known) = known(&source, id, &sha256, &mut slot, true).await? {
            return Ok(known);
        }
    }
    // Read the bytes: their digest (remembered when the stamp did not move)
    // is what the pin is checked against and what the cache is keyed by.
    let (reader, cache) = (package.clone(), source.cache.clone());
    let (bytes, sha256) = blocking(id, "reading the component", move || {
        let (bytes, stamp) = reader.read_component(max)?;
        let sha256 = cache.digest(&reader.component_path(), stamp.as_ref(), &bytes);
        Ok::<_, ComponentFileError>((bytes, sha256))
    })
    .await?;
    if let Some(expected) = expected.filter(|e| *e != sha256) {
        return Err(LoadError::Runtime {
            id: id.into(),
            stage: "loading the component",
            reason: format!(
                "its file changed since the plugin was loaded (sha256 {expected} then, {sha256} now); reload the plugins to check it again"
            ),
        });
    }
    admission::check_pin(id, &sha256, source.config)?;
    // One acquisition per digest at a time: a second package with the same
    // component waits here, then shares what the first got. It waits without
    // its bytes: a hundred copies of one plugin would otherwise all sit in
    // memory at once (it reads them again in the rare case it compiles).
    let slot = source.shared.slot(&sha256);
    let (mut slot, mut bytes) = match slot.try_lock() {
        Ok(slot) => (slot, Some(bytes)),
        Err(_) => {
            drop(bytes);
            (slot.lock().await, None)
        }
    };
    // The cache was looked in above when the digest was the remembered one.
    let look = remembered.as_deref() != Some(sha256.as_str());
    if let Some(known) = known(&source, id, &sha256, &mut slot, look).await? {
        return Ok(known);
    }
    let bytes = match bytes.take() {
        Some(bytes) => bytes,
        None => {
            let reader = package.clone();
            let expected = sha256.clone();
            blocking(id, "reading the component", move || {
                let (bytes, _) = reader.read_component(max)?;
                if admission::sha256_hex(&bytes) != expected {
                    return Err(ComponentFileError::Changed);
                }
                Ok(bytes)
            })
            .await?
        }
    };
    api_version::precheck_imports(id, &bytes)?;
    let _permit = source
        .compiles
        .acquire()
        .await
        .map_err(|e| LoadError::Runtime {
            id: id.into(),
            stage: "compiling",
            reason: e.to_string(),
        })?;
    let started = std::time::Instant::now();
    // `phase` and `plugin` let a front end draw one progress line per compile.
    tracing::info!(target: "clawhost::progress", phase = "compiling", plugin = id, "compiling plugin `{id}` ({:.1} MB)…", bytes.len() as f64 / 1e6);
    let (engine, cache, key) = (source.engine.clone(), source.cache.clone(), sha256.clone());
    let compiled = blocking(id, "compiling", move || {
        cache.compile(engine.engine(), &key, &bytes)
    })
    .await;
    let seconds = started.elapsed().as_secs_f64();
    match &compiled {
        Ok(_) => {
            tracing::info!(target: "clawhost::progress", phase = "compiled", plugin = id, "compiled plugin `{id}` in {seconds:.1} s")
        }
        Err(_) => {
            tracing::info!(target: "clawhost::progress", phase = "compiled", plugin = id, "compiling plugin `{id}` failed after {seconds:.1} s")
        }
    }
    let component = compiled?;
    *slot = Some(component.clone());
    Ok(Acquired {
        component,
        sha256,
        outcome: CacheOutcome::Compiled,
    })
}

/// The component of `sha256` this host already has, else (when `cached`)
/// the compiled cache's, kept in `slot` for the next package with it.
async fn known(
    source: &Source<'_>,
    id: &str,
    sha256: &str,
    slot: &mut Option<Component>,
    cached: bool,
) -> Result<Option<Acquired>, LoadError> {
    let acquired = |component, outcome| Acquired {
        component,
        sha256: sha256.to_string(),
        outcome,
    };
    if let Some(component) = slot.clone() {
        return Ok(Some(acquired(component, CacheOutcome::Shared)));
    }
    if !cached {
        return Ok(None);
    }
    let found = lookup(source, id, sha256).await?;
    if let Some(component) = &found {
        *slot = Some(component.clone());
    }
    Ok(found.map(|c| acquired(c, CacheOutcome::Hit)))
}

async fn lookup(
    source: &Source<'_>,
    id: &str,
    sha256: &str,
) -> Result<Option<Component>, LoadError> {
    let (engine, cache, key) = (
        source.engine.clone(),
        source.cache.clone(),
        sha256.to_string(),
    );
    blocking(id, "loading the compiled component", move || {
        Ok::<_, std::convert::Infallible>(cache.lookup(engine.engine(), &key))
    })
    .await
}

/// What acquiring a component later needs, owned: a deferred load keeps it
/// until the plugin's first instantiation.
#[derive(Clone)]
pub(crate) struct OwnedSource {
    /// The engine components are compiled for.
    pub engine: Arc<PluginEngine>,
    /// The compiled cache (and remembered digests).
    pub cache: Arc<ComponentCache>,
    /// Compiles running at once are bounded by this.
    pub compiles: Arc<tokio::sync::Semaphore>,
    /// Pins and limits.
    pub config: Arc<PluginsConfig>,
    /// Components already acquired by this host.
    pub shared: Arc<Shared>,
}

impl OwnedSource {
    /// The borrowed form [`acquire`] takes.
    pub(crate) fn source(&self) -> Source<'_> {
        Source {
            engine: &self.engine,
            cache: &self.cache,
            compiles: &self.compiles,
            config: &self.config,
            shared: &self.shared,
        }
    }
}

/// A plugin's compiled component: at hand from its load, or acquired at its
/// first instantiation. A warm start with a remembered declaration defers
/// it: mapping (and type-checking) an artifact is most of a plugin's start
/// (milliseconds for a Python or JavaScript component), and a plugin that
/// is never called never needs it.
pub(crate) struct LazyComponent {
    cell: tokio::sync::OnceCell<(Component, CacheOutcome)>,
    /// Boxed: it is most of this value's size, and a start moves each
    /// plugin's value several times.
    deferred: Option<Box<Deferred>>,
}

/// A component to acquire later: the one whose sha256 the load checked
/// against the pin, and no other.
struct Deferred {
    source: OwnedSource,
    id: String,
    package: PluginPackage,
    sha256: String,
}

impl LazyComponent {
    /// A component the load acquired.
    pub(crate) fn ready(component: Component, outcome: CacheOutcome) -> Self {
        Self {
            cell: tokio::sync::OnceCell::new_with(Some((component, outcome))),
            deferred: None,
        }
    }

    /// The component of `package` whose digest is `sha256` (pin checked),
    /// acquired at first use.
    pub(crate) fn deferred(
        source: OwnedSource,
        id: &str,
        package: PluginPackage,
        sha256: String,
    ) -> Self {
        Self {
            cell: tokio::sync::OnceCell::new(),
            deferred: Some(Box::new(Deferred {
                source,
                id: id.to_string(),
                package,
                sha256,
            })),
        }
    }

    /// The component, acquired now if the load deferred it: from this
    /// host's other packages, the compiled cache, or compiled. Its file
    /// must still have the digest the load checked.
    pub(crate) async fn get(&self) -> Result<&Component, LoadError> {
        let (component, _) = self
            .cell
            .get_or_try_init(|| async {
                let Some(d) = self.deferred.as_ref() else {
                    return Err(LoadError::Runtime {
                        id: "(component)".into(),
                        stage: "loading",
                        reason: "neither loaded nor deferred".into(),
                    });
                };
                let acquired = acquire(
                    d.source.source(),
                    &d.id,
                    &d.package,
                    Ok(Some(d.sha256.clone())),
                    Some(&d.sha256),
                )
                .await?;
                Ok((acquired.component, acquired.outcome))
            })
            .await?;
        Ok(component)
    }

    /// How the component was acquired: `Deferred` while it is not yet.
    pub(crate) fn outcome(&self) -> CacheOutcome {
        self.cell
            .get()
            .map_or(CacheOutcome::Deferred, |(_, outcome)| *outcome)
    }
}
