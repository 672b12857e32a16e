//! The plugin host: admits, compiles (through the cache), sandboxes,
//! instantiates and registers plugin packages.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clawhost_agent_core::Harness;
use clawhost_config::{Config, PluginsConfig};
use clawhost_hooks::HookRegistration;
use clawhost_tools::Tool;

use crate::abi::{Answer, Declared, Request};
use crate::api_version::ComponentFacts;
use crate::cache::declarations::DeclarationKey;
use crate::cache::ComponentCache;
use crate::cache::FunctionCache;
use crate::component_source::{self, Acquired, LazyComponent};
use crate::engine::PluginEngine;
use crate::instance::{CallLimits, PluginInstance};
use crate::logs::PluginLogs;
use crate::manifest::{candidates, Candidates};
use crate::owned_path::{canonical, overlap};
use crate::package_files::{PackageDir, PackageFiles, Reader};
use crate::plugin::{LoadedPlugin, PluginStatus};
use crate::sandbox::{EffectiveGrants, ProtectedPaths};
use crate::{admission, api_version, registration, LoadError};

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
    /// Compiles running at once are bounded: a 12–20 MB component takes
    /// seconds and ~400 MB to compile.
    compiles: Arc<tokio::sync::Semaphore>,
    /// Components acquired so far, shared by packages with the same digest.
    shared: Arc<crate::component_source::Shared>,
    config: Arc<PluginsConfig>,
    base_dir: PathBuf,
    plugins: Vec<Arc<LoadedPlugin>>,
    protected: ProtectedPaths,
    /// `plugins.paths` then `plugins.load.paths`, resolved against the config file.
    package_paths: Vec<PathBuf>,
}

impl PluginHost {
    /// A host with no plugins yet, configured by `config.plugins`.
    pub fn new(config: &Config) -> Result<Self, LoadError> {
        let package_paths: Vec<(String, PathBuf)> = config
            .plugins
            .package_paths()
            .into_iter()
            .map(|(key, p)| (key, config.resolve(p)))
            .collect();
        let functions = Arc::new(FunctionCache::default());
        let engine = PluginEngine::new(functions.clone()).map_err(|e| LoadError::Runtime {
            id: "(host)".into(),
            stage: "engine setup",
            reason: format!("{e:#}"),
        })?;
        let cache_dir = match &config.plugins.cache_dir {
            Some(dir) => Some(config.resolve(dir)),
            None => ComponentCache::default_dir(),
        };
        let key_file = config
            .plugins
            .cache_key_file
            .as_ref()
            .map(|f| config.resolve(f));
        let cache_key = if config.plugins.cache_key_file.is_some() {
            "plugins.cacheKeyFile"
        } else {
            "plugins.cacheDir"
        };
        let cache = ComponentCache::open(engine.engine(), cache_dir, key_file.clone())
            .map_err(|e| LoadError::HostSetup {
                key: cache_key.into(),
                reason: e.to_string(),
            })?
            .with_limits(
                config.plugins.cache_max_mb.saturating_mul(1 << 20),
                Duration::from_secs(config.plugins.cache_max_age_days.saturating_mul(86_400)),
            )
            .with_functions(functions);
        let mut protected = ProtectedPaths::default();
        let plugin_paths: Vec<(String, PathBuf)> = package_paths
            .iter()
            .map(|(key, p)| (key.clone(), canonical(p)))
            .collect();
        if let Some(dir) = cache.dir() {
            let grants = config.plugins.entries.iter().flat_map(|(id, e)| {
                e.grants.filesystem.iter().enumerate().map(move |(i, g)| {
                    (
                        format!("plugins.entries.{id}.grants.filesystem[{i}]"),
                        canonical(&config.resolve(&g.host_path)),
                    )
                })
            });
            for (key, path) in plugin_paths.iter().cloned().chain(grants) {
                if overlap(dir, &path) {
                    return Err(LoadError::HostSetup {
                        key: "plugins.cacheDir".into(),
                        reason: format!(
                            "the component cache {} overlaps `{key}` ({}): a plugin that can write there could plant native code; keep the cache outside every plugin path and grant",
                            dir.display(),
                            path.display()
                        ),
                    });
                }
            }
            protected.add(dir, "component cache");
        }
        if let Some(key) = key_file.or_else(ComponentCache::default_key_file) {
            protected.add(&key, "component cache key");
        }
        for (_, path) in &plugin_paths {
            protected.add(path, "plugin packages dir");
        }
        if let Some(file) = &config.source {
            protected.add(file, "config file");
        }
        // Half the cores (at least one): each compile is itself parallel.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Self {
            engine: Arc::new(engine),
            cache: Arc::new(cache),
            compiles: Arc::new(tokio::sync::Semaphore::new((cores / 2).max(1))),
            shared: Default::default(),
            config: Arc::new(config.plugins.clone()),
            base_dir: config.base_dir.clone(),
            package_paths: package_paths.into_iter().map(|(_, p)| p).collect(),
            plugins: Vec::new(),
            protected,
        })
    }

    /// Load every package found under `plugins.paths` and
    /// `plugins.load.paths` (nothing when `plugins.enabled` is false);
    /// failures are reported, not fatal, so one bad plugin does not stop the others.
    pub async fn load_configured(&mut self) -> Vec<LoadReport> {
        let mut reports = Vec::new();
        if !self.config.enabled {
            tracing::info!("plugins.enabled is false: no plugin is loaded");
            return reports;
        }
        // A package reached from two paths (a `--plugin` dir that also lies
        // under `plugins.paths`) is loaded from the first only.
        let mut seen = std::collections::HashSet::new();
        let mut found = Vec::new();
        for (path, dirs) in discover_all(&self.package_paths) {
            let dirs = match dirs {
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
            let read = self.reader().read_all(&dirs).await;
            found.extend(dirs.into_iter().zip(read).filter_map(|(found, files)| {
                let files = files?;
                let real = files.real_dir.clone().unwrap_or_else(|| found.dir.clone());
                seen.insert(real).then_some((found.dir, files))
            }));
        }
        // Packages are prepared concurrently (hashing and loading the
        // compiled code run on blocking threads), then admitted in order.
        let (dirs, files): (Vec<PathBuf>, Vec<PackageFiles>) = found.into_iter().unzip();
        let prepared =
            futures::future::join_all(files.into_iter().map(|files| self.prepare(files))).await;
        // An id is claimed across every path, by packages that failed to
        // prepare too: an impostor never inherits an id its rival lost.
        let claims = claimed_ids(&dirs, &prepared);
        for (dir, prepared) in dirs.into_iter().zip(prepared) {
            let result = prepared.and_then(|plugin| {
                    match claims.get(plugin.id()).filter(|d| d.len() > 1) {
                        // Two packages claim one id: unless a sha256 pin
                        // decided it (a mismatch is refused in `prepare`),
                        // neither may take the id.
                        Some(dirs) if plugin.settings().sha256.is_none() => Err(LoadError::Refused {
                            id: plugin.id().into(),
                            rule: format!(
                                "{} packages claim this id ({}); pin the right one with plugins.entries.{}.sha256 or remove the others",
                                dirs.len(),
                                dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
                                plugin.id()
                            ),
                        }),
                        _ => self.admit(plugin),
                    }
                });
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
        reports
    }

    /// Load one plugin package directory.
    pub async fn load_package(&mut self, dir: &Path) -> Result<Arc<LoadedPlugin>, LoadError> {
        let files = self.reader().read_one(dir).await;
        let plugin = self.prepare(files).await?;
        self.admit(plugin)
    }

    /// What reads packages' files for [`Self::prepare`].
    fn reader(&self) -> Reader {
        Reader {
            cache: self.cache.clone(),
            config: self.config.clone(),
            base_dir: self.base_dir.clone(),
            protected: self.protected.clone(),
        }
    }

    /// Add a prepared plugin, unless one with its id is already loaded or
    /// its grants overlap another plugin's.
    fn admit(&mut self, plugin: LoadedPlugin) -> Result<Arc<LoadedPlugin>, LoadError> {
        self.refuse_duplicate(plugin.id())?;
        self.refuse_overlapping_grants(&plugin)?;
        let plugin = Arc::new(plugin);
        self.plugins.push(plugin.clone());
        Ok(plugin)
    }

    /// Grants of two plugins may not nest or coincide where either may write
    /// (one could change what the other reads), unless the operator allows it.
    fn refuse_overlapping_grants(&self, plugin: &LoadedPlugin) -> Result<(), LoadError> {
        if self.config.allow_overlapping_grants {
            return Ok(());
        }
        for dir in &plugin.instance.grants().dirs {
            for other in &self.plugins {
                let clash = other.instance.grants().dirs.iter().find(|o| {
                    overlap(&o.host_path, &dir.host_path)
                        && (o.access == clawhost_config::Access::ReadWrite
                            || dir.access == clawhost_config::Access::ReadWrite)
                });
                if let Some(o) = clash {
                    return Err(LoadError::Grant {
                        id: plugin.id().into(),
                        what: format!("{} → {}", dir.guest_path, dir.host_path.display()),
                        reason: format!(
                            "it overlaps plugin `{}`'s grant of {} and one of them may write; set plugins.allowOverlappingGrants to allow it",
                            other.id(),
                            o.host_path.display()
                        ),
                    });
                }
            }
        }
        Ok(())
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
    async fn prepare(&self, files: PackageFiles) -> Result<LoadedPlugin, LoadError> {
        let PackageFiles {
            package,
            real_dir: _,
            component_file,
            remembered: remembered_digest,
            grants,
            declaration: read_declaration,
        } = files;
        let package = package?;
        let id = package.manifest.id.clone();
        let entry = admission::entry(&self.config, &id);
        if !entry.enabled {
            return Err(LoadError::Refused {
                id,
                rule: "plugins.entries.<id>.enabled is false".replace("<id>", &package.manifest.id),
            });
        }
        admission::check_lists(&id, &self.config)?;
        self.refuse_duplicate(&id)?;
        admission::check_config(&id, package.manifest.config_schema.as_ref(), &entry.config)?;
        crate::signed::check_signature(
            &id,
            &package.dir,
            &package.manifest.capabilities,
            &self.config,
            &self.base_dir,
        )?;
        let manifest_api = api_version::check_manifest(&id, &package.manifest.api_version)?;
        let runtime = |stage: &'static str| {
            let id = id.clone();
            move |e: String| LoadError::Runtime {
                id,
                stage,
                reason: e,
            }
        };
        let config_json = entry.config.to_string();
        let key_of = |sha256: &str, grants: &EffectiveGrants| DeclarationKey {
            sha256: sha256.to_string(),
            api: manifest_api.as_str(),
            config_json: config_json.clone(),
            grants: grants.fingerprint(),
        };
        let grants = grants.unwrap_or_else(|| {
            EffectiveGrants::resolve(
                &id,
                &package.manifest.capabilities,
                &entry.grants,
                &self.base_dir,
                &self.protected,
            )
        });
        // An unchanged, pinned component whose declaration is remembered
        // under this load's key is not loaded now: the record holds what the
        // load checks of it, and its first instantiation maps it.
        let mut read_ahead =
            read_declaration.map(|(key, declared, facts)| (key, (declared, facts)));
        let mut remembered_record = None;
        // The key looked up here, found or not: not looked up again below.
        let mut looked_up = None;
        if let (Ok(Some(sha256)), Ok(grants)) = (&remembered_digest, &grants) {
            admission::check_pin(&id, sha256, &self.config)?;
            let key = key_of(sha256, grants);
            remembered_record = match read_ahead.take().filter(|(read_key, _)| *read_key == key) {
                Some((_, record)) => Some(record),
                None => {
                    self.remembered_declaration(component_file.as_deref(), &key)
                        .await
                }
            }
            .map(|record| (sha256.clone(), record));
            looked_up = Some(key);
        }
        let (component, sha256, facts, declared) = match remembered_record {
            Some((sha256, (declared, facts))) => {
                let component = LazyComponent::deferred(
                    self.component_sources(),
                    &id,
                    package.clone(),
                    sha256.clone(),
                );
                (component, sha256, facts, Some(declared))
            }
            None => {
                // Boxed, as is `register` below: a warm start runs one
                // `prepare` per plugin at once, and these slow paths would
                // make every one of them as large as their futures.
                let Acquired {
                    component,
                    sha256,
                    outcome,
                } = Box::pin(component_source::acquire(
                    self.component_sources().source(),
                    &id,
                    &package,
                    remembered_digest,
                    None,
                ))
                .await?;
                let facts = ComponentFacts::of(self.engine.engine(), &component, manifest_api);
                (
                    LazyComponent::ready(component, outcome),
                    sha256,
                    facts,
                    None,
                )
            }
        };
        let grants = grants?;
        let harness_granted = package.manifest.capabilities.harness && entry.grants.harness;
        let api = api_version::check_component(&id, &facts, manifest_api, harness_granted)?;
        let facts = Arc::new(facts);
        let limits = &self.config.limits;
        let logs = PluginLogs::new(
            &id,
            usize::try_from(limits.max_log_kb_per_call << 10).unwrap_or(usize::MAX),
        );
        let key = key_of(&sha256, &grants);
        let instance = PluginInstance::new(
            id.clone(),
            self.engine.clone(),
            component,
            facts.harness,
            api,
            grants,
            config_json.into(),
            logs.clone(),
            CallLimits {
                memory_bytes: entry.memory_mb.unwrap_or(limits.memory_mb) << 20,
                timeout: Duration::from_millis(limits.call_timeout_ms),
                max_consecutive_traps: limits.max_consecutive_traps.max(1),
                quarantine: Duration::from_millis(limits.quarantine_ms),
                harness_turn_timeout: Duration::from_millis(limits.harness_turn_timeout_ms),
                max_output_bytes: usize::try_from(limits.max_output_kb << 10).unwrap_or(usize::MAX),
                max_handles: limits.max_handles as usize,
            },
        );
        if instance.is_harness() && !harness_granted {
            // A harness is handed the conversation; 0.2 harnesses cannot
            // avoid the granted import, a 0.1 harness could export without it.
            return Err(LoadError::Refused {
                id,
                rule: format!(
                    "it exports an agent runtime (harness), which needs `capabilities.harness` in its manifest and plugins.entries.{}.grants.harness = true",
                    package.manifest.id
                ),
            });
        }
        // A remembered declaration was written after this component linked
        // and registered in this host version: linking waits for first use.
        let remembered_declaration = match declared {
            Some(declared) => Some(declared),
            None => match read_ahead.filter(|(read_key, _)| *read_key == key) {
                Some((_, (declared, _))) => Some(declared),
                None if looked_up.as_ref() == Some(&key) => None,
                None => self
                    .remembered_declaration(component_file.as_deref(), &key)
                    .await
                    .map(|(d, _)| d),
            },
        };
        let (declared, remembered) = match remembered_declaration {
            Some(declared) => (declared, true),
            None => {
                let register = Box::pin(async {
                    instance
                        .link()
                        .await
                        .map_err(|e| runtime("linking")(format!("{e:#}")))?;
                    match instance.call(Request::Register).await {
                        Ok(Answer::Declared(d)) => Ok(d),
                        Ok(_) => Err(runtime("registration")(
                            "the API bindings answered with another kind of answer".into(),
                        )),
                        Err(e) => Err(runtime("registration")(e.to_string())),
                    }
                });
                (register.await?, false)
            }
        };
        let registration = registration::check(
            &id,
            &package.manifest.version,
            declared.clone(),
            instance.is_harness(),
            remembered,
        )
        .map_err(|reason| LoadError::Registration {
            id: id.clone(),
            reason: reason.to_string(),
        })?;
        let remembered = remembered.then(Arc::<AtomicBool>::default);
        if let Some(outdated) = remembered.clone() {
            // Not instantiated until first used; that instance checks the
            // record against its own answer.
            let (cache, plugin, file) = (self.cache.clone(), id.clone(), component_file);
            let (version, harness) = (package.manifest.version.clone(), instance.is_harness());
            let facts = facts.clone();
            instance.register_on_first_instance(Box::new(move |fresh| {
                if fresh != declared {
                    outdated.store(true, Ordering::Relaxed);
                    tracing::warn!(plugin = %plugin, "register now answers differently from the remembered declaration: this load keeps the remembered tools and hooks; the next load uses the new ones");
                    // Only what passes the full check (schemas compiled) is
                    // remembered: a remembered one is trusted to compile.
                    match registration::check(&plugin, &version, fresh.clone(), harness, false) {
                        Ok(_) => {
                            if let Some(file) = &file {
                                cache.remember_declaration(file, &key, &fresh, &facts)
                            }
                        }
                        Err(reason) => {
                            tracing::warn!(plugin = %plugin, %reason, "the new answer does not pass the registration check: the record is forgotten, so the next load checks it again and refuses the plugin");
                            if let Some(file) = &file {
                                cache.forget_declaration(file, &key);
                            }
                        }
                    }
                }
            }));
        } else if let Some(file) = component_file {
            let (cache, key, facts) = (self.cache.clone(), key, facts.clone());
            let _ = tokio::task::spawn_blocking(move || {
                cache.remember_declaration(&file, &key, &declared, &facts)
            })
            .await;
        }
        Ok(LoadedPlugin {
            manifest: package.manifest,
            dir: package.dir,
            sha256,
            registration,
            instance,
            logs,
            config: self.config.clone(),
            facts,
            remembered,
        })
    }

    /// What acquiring a component needs, owned (a deferred one keeps it).
    fn component_sources(&self) -> component_source::OwnedSource {
        component_source::OwnedSource {
            engine: self.engine.clone(),
            cache: self.cache.clone(),
            compiles: self.compiles.clone(),
            config: self.config.clone(),
            shared: self.shared.clone(),
        }
    }

    /// The declaration (and component facts) remembered under `key` in the
    /// record of `file` (the component's canonical path), read on a
    /// blocking thread.
    async fn remembered_declaration(
        &self,
        file: Option<&Path>,
        key: &DeclarationKey,
    ) -> Option<(Declared, ComponentFacts)> {
        let (cache, file, key) = (self.cache.clone(), file?.to_path_buf(), key.clone());
        tokio::task::spawn_blocking(move || cache.remembered_declaration(&file, &key))
            .await
            .ok()
            .flatten()
    }

    /// Unload a plugin (its tools, hooks and harness are no longer offered).
    pub fn remove(&mut self, id: &str) -> Option<Arc<LoadedPlugin>> {
        let at = self.plugins.iter().position(|p| p.id() == id)?;
        Some(self.plugins.remove(at))
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

/// The packages (and candidates, [`Candidates`]) under each of `paths`, in
/// order.
fn discover_all(paths: &[PathBuf]) -> Vec<(PathBuf, std::io::Result<Vec<PackageDir>>)> {
    paths
        .iter()
        .map(|path| {
            let dirs = candidates(path).map(|found| match found {
                Candidates::Package(dir) => vec![PackageDir {
                    dir,
                    candidate: false,
                }],
                Candidates::Subdirectories(dirs) => dirs
                    .into_iter()
                    .map(|dir| PackageDir {
                        dir,
                        candidate: true,
                    })
                    .collect(),
            });
            (path.clone(), dirs)
        })
        .collect()
}

/// The package dirs that claim each plugin id: those prepared, and those
/// refused after their manifest named an id.
fn claimed_ids(
    dirs: &[PathBuf],
    prepared: &[Result<LoadedPlugin, LoadError>],
) -> std::collections::HashMap<String, Vec<PathBuf>> {
    let mut claims: std::collections::HashMap<String, Vec<PathBuf>> = Default::default();
    for (dir, p) in dirs.iter().zip(prepared) {
        let id = match p {
            Ok(p) => Some(p.id()),
            Err(e) => e.plugin_id(),
        };
        if let Some(id) = id {
            claims.entry(id.to_string()).or_default().push(dir.clone());
        }
    }
    claims
}
