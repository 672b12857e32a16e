//! The plugin host: admits, compiles (through the cache), sandboxes,
//! instantiates and registers plugin packages.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clawhost_agent_core::Harness;
use clawhost_config::{Config, PluginsConfig};
use clawhost_hooks::HookRegistration;
use clawhost_tools::Tool;

use crate::cache::ComponentCache;
use crate::engine::PluginEngine;
use crate::instance::{CallLimits, PluginInstance, Request, Response};
use crate::logs::PluginLogs;
use crate::manifest::{discover, PluginPackage};
use crate::plugin::{LoadedPlugin, PluginStatus};
use crate::sandbox::EffectiveGrants;
use crate::{admission, api_version, convert, LoadError};

/// The outcome of loading one package.
#[derive(Debug)]
pub struct LoadReport {
    /// The package directory.
    pub dir: PathBuf,
    /// The plugin id, when the manifest was readable.
    pub id: Option<String>,
    /// `Ok` when loaded.
    pub result: Result<(), LoadError>,
}

/// Loaded plugins and the engine they run on.
pub struct PluginHost {
    engine: Arc<PluginEngine>,
    cache: Arc<ComponentCache>,
    config: PluginsConfig,
    base_dir: PathBuf,
    plugins: Vec<Arc<LoadedPlugin>>,
}

impl PluginHost {
    /// A host with no plugins yet, configured by `config.plugins`.
    pub fn new(config: &Config) -> Result<Self, LoadError> {
        let limits = &config.plugins.limits;
        let engine = PluginEngine::new(limits.memory_mb << 20).map_err(|e| LoadError::Runtime {
            id: "(host)".into(),
            stage: "engine setup",
            reason: format!("{e:#}"),
        })?;
        let cache_dir = match &config.plugins.cache_dir {
            Some(dir) => Some(config.resolve(dir)),
            None => ComponentCache::default_dir(),
        };
        let cache = ComponentCache::new(engine.engine(), cache_dir);
        Ok(Self {
            engine: Arc::new(engine),
            cache: Arc::new(cache),
            config: config.plugins.clone(),
            base_dir: config.base_dir.clone(),
            plugins: Vec::new(),
        })
    }

    /// Load every package found under `plugins.paths`; failures are reported,
    /// not fatal, so one bad plugin does not stop the others.
    pub async fn load_configured(&mut self) -> Vec<LoadReport> {
        let mut reports = Vec::new();
        for path in self.config.paths.clone() {
            let path = if path.is_absolute() {
                path
            } else {
                self.base_dir.join(path)
            };
            let dirs = match discover(&path) {
                Ok(dirs) => dirs,
                Err(e) => {
                    reports.push(LoadReport {
                        dir: path.clone(),
                        id: None,
                        result: Err(LoadError::Manifest {
                            path,
                            reason: format!("cannot list plugin packages: {e}"),
                        }),
                    });
                    continue;
                }
            };
            // Packages are prepared concurrently (hashing and loading the
            // compiled code run on blocking threads), then admitted in order.
            let prepared =
                futures::future::join_all(dirs.iter().map(|dir| self.prepare(dir))).await;
            for (dir, prepared) in dirs.into_iter().zip(prepared) {
                let result = prepared.and_then(|plugin| self.admit(plugin));
                let id = match &result {
                    Ok(p) => Some(p.id().to_string()),
                    Err(e) => e.plugin_id().map(str::to_string),
                };
                match &result {
                    Ok(_) => tracing::info!(plugin = ?id, dir = %dir.display(), "plugin loaded"),
                    Err(e) => tracing::warn!(dir = %dir.display(), error = %e, "plugin not loaded"),
                }
                reports.push(LoadReport {
                    dir,
                    id,
                    result: result.map(|_| ()),
                });
            }
        }
        reports
    }

    /// Load one plugin package directory.
    pub async fn load_package(&mut self, dir: &Path) -> Result<Arc<LoadedPlugin>, LoadError> {
        let plugin = self.prepare(dir).await?;
        self.admit(plugin)
    }

    /// Add a prepared plugin, unless one with its id is already loaded.
    fn admit(&mut self, plugin: LoadedPlugin) -> Result<Arc<LoadedPlugin>, LoadError> {
        self.refuse_duplicate(plugin.id())?;
        let plugin = Arc::new(plugin);
        self.plugins.push(plugin.clone());
        Ok(plugin)
    }

    fn refuse_duplicate(&self, id: &str) -> Result<(), LoadError> {
        match self.plugins.iter().find(|p| p.id() == id) {
            Some(existing) => Err(LoadError::Refused {
                id: id.into(),
                rule: format!(
                    "a plugin with this id is already loaded from {}",
                    existing.dir.display()
                ),
            }),
            None => Ok(()),
        }
    }

    /// Admission, compilation (or the cache), instantiation and `register`.
    async fn prepare(&self, dir: &Path) -> Result<LoadedPlugin, LoadError> {
        let package = PluginPackage::read(dir)?;
        let id = package.manifest.id.clone();
        let entry = self.config.entries.get(&id).cloned().unwrap_or_default();
        if !entry.enabled {
            return Err(LoadError::Refused {
                id,
                rule: "plugins.entries.<id>.enabled is false".replace("<id>", &package.manifest.id),
            });
        }
        admission::check_lists(&id, &self.config)?;
        self.refuse_duplicate(&id)?;
        api_version::check_manifest(&id, &package.manifest.api_version)?;
        let runtime = |stage: &'static str| {
            let id = id.clone();
            move |e: String| LoadError::Runtime {
                id,
                stage,
                reason: e,
            }
        };
        let path = package.component_path();
        let (bytes, sha256) = tokio::task::spawn_blocking(move || {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let sha256 = admission::sha256_hex(&bytes);
            Ok::<_, String>((bytes, sha256))
        })
        .await
        .map_err(|e| runtime("reading the component")(e.to_string()))?
        .map_err(runtime("reading the component"))?;
        admission::check_pin(&id, &sha256, &self.config)?;
        let grants = EffectiveGrants::resolve(
            &id,
            &package.manifest.capabilities,
            &entry.grants,
            &self.base_dir,
        )?;

        let (engine, cache, key) = (self.engine.clone(), self.cache.clone(), sha256.clone());
        let (component, cache_outcome) =
            tokio::task::spawn_blocking(move || cache.load(engine.engine(), &key, &bytes))
                .await
                .map_err(|e| runtime("compiling")(e.to_string()))?
                .map_err(|e| runtime("compiling")(format!("{e:#}")))?;
        api_version::check_component(
            &id,
            self.engine.engine(),
            &component,
            package.manifest.capabilities.harness && entry.grants.harness,
        )?;
        let pre = self
            .engine
            .linker()
            .instantiate_pre(&component)
            .map_err(|e| runtime("linking")(format!("{e:#}")))?;

        let limits = &self.config.limits;
        let logs = PluginLogs::new(&id);
        let instance = PluginInstance::new(
            id.clone(),
            self.engine.clone(),
            pre,
            grants,
            entry.config.to_string().into(),
            logs.clone(),
            CallLimits {
                memory_bytes: limits.memory_mb << 20,
                timeout: Duration::from_millis(limits.call_timeout_ms),
                max_consecutive_traps: limits.max_consecutive_traps.max(1),
                harness_turn_timeout: Duration::from_millis(limits.harness_turn_timeout_ms),
                max_output_bytes: usize::try_from(limits.max_output_kb << 10).unwrap_or(usize::MAX),
            },
        )
        .map_err(|e| runtime("linking")(format!("{e:#}")))?;
        let registration = match instance.call(Request::Register).await {
            Ok(Response::Registration(r)) => r,
            Ok(_) => unreachable!("register answers with a registration"),
            Err(e) => return Err(runtime("register()")(e.to_string())),
        };
        let registration = convert::registration(&id, registration, instance.is_harness())
            .map_err(|reason| LoadError::Registration {
                id: id.clone(),
                reason,
            })?;
        Ok(LoadedPlugin {
            manifest: package.manifest,
            dir: package.dir,
            sha256,
            cache: cache_outcome,
            registration,
            instance,
            logs,
            settings: entry,
        })
    }

    /// Loaded plugins, in load order.
    pub fn plugins(&self) -> &[Arc<LoadedPlugin>] {
        &self.plugins
    }

    /// A loaded plugin by id.
    pub fn plugin(&self, id: &str) -> Option<&Arc<LoadedPlugin>> {
        self.plugins.iter().find(|p| p.id() == id)
    }

    /// Status of every loaded plugin.
    pub fn statuses(&self) -> Vec<PluginStatus> {
        self.plugins.iter().map(|p| p.status()).collect()
    }

    /// Every plugin tool.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.plugins.iter().flat_map(|p| p.tools()).collect()
    }

    /// Every plugin harness (agent runtime).
    pub fn harnesses(&self) -> Vec<Arc<dyn Harness>> {
        self.plugins.iter().filter_map(|p| p.harness()).collect()
    }

    /// Every plugin hook subscription.
    pub fn hook_registrations(&self) -> Vec<HookRegistration> {
        self.plugins
            .iter()
            .flat_map(|p| p.hook_registrations())
            .collect()
    }
}
