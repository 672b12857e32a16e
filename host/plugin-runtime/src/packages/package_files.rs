//! What a load reads from disk for one package, read in one blocking step:
//! its canonical path, its manifest (a discovered subdirectory without one
//! is not a package), its component's package record (the digest
//! remembered for the file's stamp, and the remembered declaration) and its
//! grants (opening the granted directories). A start reads all its packages
//! in a few batches, one per core, instead of hopping to a blocking thread
//! several times per package: on a warm start the hops, not the small
//! reads, were most of each plugin's cost.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clawhost_config::PluginsConfig;

use crate::abi::Declared;
use crate::api_version::ComponentFacts;
use crate::cache::declarations::DeclarationKey;
use crate::cache::ComponentCache;
use crate::manifest::PluginPackage;
use crate::owned_path::plain_path_under;
use crate::sandbox::{EffectiveGrants, ProtectedPaths};
use crate::{admission, api_version, LoadError};

/// One package's files, as [`Reader::read`] found them. Every failure is
/// kept for the step of the load that reports it, so errors come in the
/// load's order whatever was read ahead.
pub(crate) struct PackageFiles {
    /// The manifest, checked.
    pub package: Result<PluginPackage, LoadError>,
    /// The package directory's canonical path, when it resolves.
    pub real_dir: Option<PathBuf>,
    /// The component file's canonical path, when it could be stat'ed: what
    /// its package record is kept under.
    pub component_file: Option<PathBuf>,
    /// The digest remembered for the component file's current stamp
    /// (`Ok(None)`: none; `Err`: the file could not be stat'ed).
    pub remembered: Result<Option<String>, crate::manifest::ComponentFileError>,
    /// The plugin's grants; `None` when not read (a disabled or unlisted plugin).
    pub grants: Option<Result<EffectiveGrants, LoadError>>,
    /// The declaration (and component facts) remembered under the key this
    /// read expects; the load uses it only if its own key is the same.
    pub declaration: Option<(DeclarationKey, Declared, ComponentFacts)>,
}

/// A package directory to read, as found.
#[derive(Clone)]
pub(crate) struct PackageDir {
    /// As found under a plugin path.
    pub dir: PathBuf,
    /// Whether it is only a candidate: a subdirectory of a plugin path,
    /// which is not a package unless it holds a manifest.
    pub candidate: bool,
}

/// Reads packages' files; cheap to clone into a blocking task.
#[derive(Clone)]
pub(crate) struct Reader {
    /// Remembered digests and declarations.
    pub cache: Arc<ComponentCache>,
    /// Entries (config, grants), lists and limits.
    pub config: Arc<PluginsConfig>,
    /// What relative grant paths resolve against.
    pub base_dir: PathBuf,
    /// Paths no grant may hold.
    pub protected: ProtectedPaths,
}

impl Reader {
    /// Read the files of every package in `dirs`, in order, split over one
    /// blocking task per core; `None` for a candidate that holds no
    /// manifest (not a package).
    pub(crate) async fn read_all(&self, dirs: &[PackageDir]) -> Vec<Option<PackageFiles>> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let chunk = dirs.len().div_ceil(cores).max(1);
        let batches = dirs.chunks(chunk).map(|chunk| {
            let (reader, chunk) = (self.clone(), chunk.to_vec());
            async move {
                let dirs: Vec<PathBuf> = chunk.iter().map(|d| d.dir.clone()).collect();
                match tokio::task::spawn_blocking(move || {
                    let mut parents = CanonicalParents::default();
                    chunk
                        .iter()
                        .map(|d| reader.read(d, &mut parents))
                        .collect::<Vec<_>>()
                })
                .await
                {
                    Ok(files) => files,
                    Err(e) => dirs
                        .into_iter()
                        .map(|dir| Some(PackageFiles::failed(dir, e.to_string())))
                        .collect(),
                }
            }
        });
        futures::future::join_all(batches)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Read one package's files on a blocking thread.
    pub(crate) async fn read_one(&self, dir: &Path) -> PackageFiles {
        let found = PackageDir {
            dir: dir.to_path_buf(),
            candidate: false,
        };
        let read = self.read_all(&[found]).await.pop().flatten();
        // A package that is not a candidate is always read.
        read.unwrap_or_else(|| PackageFiles::failed(dir.to_path_buf(), "not read".into()))
    }

    /// Read one package's files (blocking).
    fn read(&self, found: &PackageDir, parents: &mut CanonicalParents) -> Option<PackageFiles> {
        let dir = &found.dir;
        let package = match found.candidate {
            true => PluginPackage::read_if_present(dir).transpose()?,
            false => PluginPackage::read(dir),
        };
        // Resolved once, after its parent: for the component's path and
        // for telling a package reached from two plugin paths.
        let real_dir = parents.canonical(dir).or_else(|| dir.canonicalize().ok());
        let package = match package {
            Ok(package) => package,
            Err(e) => return Some(PackageFiles::unread(e, real_dir)),
        };
        let manifest = &package.manifest;
        let id = &manifest.id;
        let max = self.config.limits.max_component_mb << 20;
        let stamped = package.stamp_component(max, real_dir.as_deref());
        let (component_file, remembered) = match stamped {
            Ok((path, stamp)) => {
                let remembered = self.cache.remembered(&path, &stamp);
                (Some(path), Ok(remembered))
            }
            Err(e) => (None, Err(e)),
        };
        let entry = admission::entry(&self.config, id);
        let digest = remembered
            .as_ref()
            .map(|r| r.as_ref().map(|r| r.sha256.clone()))
            .map_err(Clone::clone);
        let (grants, declaration) =
            if entry.enabled && admission::check_lists(id, &self.config).is_ok() {
                let grants = EffectiveGrants::resolve(
                    id,
                    &manifest.capabilities,
                    &entry.grants,
                    &self.base_dir,
                    &self.protected,
                );
                let declaration = match (remembered, &grants) {
                    (Ok(Some(remembered)), Ok(grants)) => {
                        api_version::check_manifest(id, &manifest.api_version)
                            .ok()
                            .and_then(|api| {
                                let key = DeclarationKey {
                                    sha256: remembered.sha256.clone(),
                                    api: api.as_str(),
                                    config_json: entry.config.to_string(),
                                    grants: grants.fingerprint(),
                                };
                                let (declared, facts) = self.cache.declaration(remembered, &key)?;
                                Some((key, declared, facts))
                            })
                    }
                    _ => None,
                };
                (Some(grants), declaration)
            } else {
                (None, None)
            };
        Some(PackageFiles {
            package: Ok(package),
            real_dir,
            component_file,
            remembered: digest,
            grants,
            declaration,
        })
    }
}

/// Canonical package directories, resolving each parent directory once:
/// packages are mostly siblings under one plugins directory.
#[derive(Default)]
struct CanonicalParents(Vec<(PathBuf, Option<PathBuf>)>);

impl CanonicalParents {
    /// `dir`'s canonical path when it is not a symlink itself (its parent
    /// resolved once, then one `lstat`); `None` leaves it to the caller.
    fn canonical(&mut self, dir: &Path) -> Option<PathBuf> {
        let (parent, name) = (dir.parent()?, dir.file_name()?);
        let real_parent = match self.0.iter().find(|(p, _)| p == parent) {
            Some((_, real)) => real.clone(),
            None => {
                let real = parent.canonicalize().ok();
                self.0.push((parent.to_path_buf(), real.clone()));
                real
            }
        }?;
        plain_path_under(&real_parent, Path::new(name))
    }
}

impl PackageFiles {
    /// A package whose manifest could not be read.
    fn unread(error: LoadError, real_dir: Option<PathBuf>) -> Self {
        Self {
            package: Err(error),
            real_dir,
            component_file: None,
            remembered: Ok(None),
            grants: None,
            declaration: None,
        }
    }

    /// A package whose read did not finish (its blocking task panicked).
    fn failed(dir: PathBuf, reason: String) -> Self {
        let error = LoadError::Manifest {
            path: dir,
            reason: format!("reading the package failed: {reason}"),
        };
        Self::unread(error, None)
    }
}
