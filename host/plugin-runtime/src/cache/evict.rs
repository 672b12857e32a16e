//! Keeping the cache within its size and age bounds, least recently used
//! artifact first.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{artifact, declarations, ComponentCache, Evicted};

/// What earlier versions kept and this one no longer reads, removed at a
/// sweep: component digests before package records held them, and the
/// per-plugin-path bundles of manifests and records.
const LEGACY_DIRS: [&str; 2] = ["digests", "bundles"];

/// Whether `path` names a compiled artifact (not its tag or stamp files).
fn is_artifact(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "cwasm")
}

impl ComponentCache {
    /// The bytes of compiled artifacts in the cache dir `dir`: what
    /// `plugins.cacheMaxMb` bounds.
    pub fn artifact_bytes(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .filter(|e| is_artifact(&e.path()))
                    .filter_map(|e| std::fs::symlink_metadata(e.path()).ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Remove artifacts unused for longer than the age bound, then the least
    /// recently used ones until the rest fit the size bound. `keep` (the
    /// artifact just written) is never removed. An artifact's last use is
    /// its tag file's modification time (its own, when it has no tag file).
    pub fn evict(&self, keep: Option<&Path>) -> Evicted {
        let Some(disk) = &self.disk else {
            return Evicted::default();
        };
        for legacy in LEGACY_DIRS {
            let _ = std::fs::remove_dir_all(disk.dir.join(legacy));
        }
        let Ok(entries) = std::fs::read_dir(&disk.dir) else {
            return Evicted::default();
        };
        let now = SystemTime::now();
        let modified = |p: &Path| {
            std::fs::symlink_metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .and_then(|m| Some((m.len(), m.modified().ok()?)))
        };
        let mut files: Vec<(PathBuf, u64, SystemTime)> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| is_artifact(p))
            .filter_map(|p| {
                let (len, own) = modified(&p)?;
                let used = modified(&artifact::tag_path(&p)).map_or(own, |(_, t)| t);
                Some((p, len, used))
            })
            .collect();
        files.sort_by_key(|(_, _, used)| *used);
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        let mut evicted = Evicted::default();
        for (path, len, used) in files {
            let old = now.duration_since(used).unwrap_or_default() > self.max_age;
            if (total <= self.max_bytes && !old) || keep == Some(path.as_path()) {
                continue;
            }
            if std::fs::remove_file(&path).is_ok() {
                let _ = std::fs::remove_file(artifact::tag_path(&path));
                // `<sha256>-<engine key>.cwasm`: its declaration records go too.
                if let Some(sha256) = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split('-').next())
                {
                    declarations::forget(&disk.dir, sha256);
                }
                total -= len;
                evicted.files += 1;
                evicted.bytes += len;
            }
        }
        // Compiled functions: a quarter of the size bound, the same age.
        let functions = disk.dir.join(format!("functions-{}", self.engine_key));
        super::functions::evict(&functions, self.max_bytes / 4, self.max_age);
        if evicted.files > 0 {
            tracing::info!(target: "clawhost::progress", files = evicted.files, bytes = evicted.bytes, "evicted compiled components from the cache");
        }
        evicted
    }
}
