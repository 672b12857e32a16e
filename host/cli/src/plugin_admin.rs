//! `clawhost plugins install/uninstall/enable/disable`: the operator's edits
//! of which plugins load, each written into the config file with its comments
//! kept. An install copies a verified package next to the config and pins it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clawhost_config::edit::ConfigFile;
use clawhost_config::Config;
use clawhost_plugin_runtime::{PluginHost, PluginPackage, MANIFEST_FILE};
use serde_json::{json, Value};

/// Where `plugins install` puts packages, relative to the config file.
const INSTALL_DIR: &str = "plugins";

/// Most bytes unpacked from one archive, all entries together (a component
/// is at most `plugins.limits.maxComponentMb`; this only bounds the
/// unpacking, so a compressed bomb cannot fill the disk).
const MAX_ARCHIVE_BYTES: u64 = 512 << 20;

/// Most entries unpacked from one archive.
const MAX_ARCHIVE_ENTRIES: usize = 10_000;

/// What `plugins install` grants besides the package itself.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct InstallGrants {
    /// Mount a host directory where the plugin asks for one:
    /// `GUEST=HOST` (`/notes=./notes`), with the access the manifest requests.
    #[arg(long = "fs", value_name = "GUEST=HOST")]
    pub fs: Vec<String>,
    /// Let the plugin read this environment variable (repeatable).
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Grant a capability: `harness`, `toolResults` or `compaction` (repeatable).
    #[arg(long = "grant", value_name = "CAPABILITY")]
    pub grant: Vec<String>,
    /// Replace a package already installed under this id.
    #[arg(long)]
    pub force: bool,
}

/// The directory packages are installed into for the config at `path`.
fn install_root(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(INSTALL_DIR)
}

/// Unpack a `.tar`, `.tar.gz` or `.tgz` archive into `into`. Only regular
/// files and directories under `into` are accepted: a link, a device, an
/// absolute path or `..` refuses the archive whole.
fn unpack(archive: &Path, into: &Path) -> anyhow::Result<()> {
    let file =
        std::fs::File::open(archive).with_context(|| format!("opening {}", archive.display()))?;
    let name = archive.to_string_lossy();
    let reader: Box<dyn std::io::Read> = if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut tar = tar::Archive::new(reader);
    let (mut bytes, mut count) = (0u64, 0usize);
    for entry in tar.entries().context("reading the archive")? {
        count += 1;
        if count > MAX_ARCHIVE_ENTRIES {
            bail!(
                "{}: more than {MAX_ARCHIVE_ENTRIES} entries",
                archive.display()
            );
        }
        let mut entry = entry.context("reading the archive")?;
        let path = entry
            .path()
            .context("an archive entry's path")?
            .into_owned();
        let safe = path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        let kind = entry.header().entry_type();
        if !safe {
            bail!(
                "{}: entry `{}` leaves the package",
                archive.display(),
                path.display()
            );
        }
        if !(kind.is_file() || kind.is_dir()) {
            bail!(
                "{}: entry `{}` is not a regular file or directory ({kind:?})",
                archive.display(),
                path.display()
            );
        }
        bytes = bytes.saturating_add(entry.size());
        if bytes > MAX_ARCHIVE_BYTES {
            bail!(
                "{}: entry `{}` takes the archive past {} MiB unpacked",
                archive.display(),
                path.display(),
                MAX_ARCHIVE_BYTES >> 20
            );
        }
        let target = into.join(&path);
        if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
        } else {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let mut out = std::fs::File::create(&target)
                .with_context(|| format!("writing {}", target.display()))?;
            std::io::copy(&mut entry, &mut out)?;
        }
    }
    Ok(())
}

/// The package directory inside an unpacked archive: its root, or the one
/// top-level directory holding a manifest.
fn package_in(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.join(MANIFEST_FILE).is_file() {
        return Ok(dir.to_path_buf());
    }
    let found = clawhost_plugin_runtime::discover(dir)?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("the archive holds no {MANIFEST_FILE}"),
        _ => bail!(
            "the archive holds {} packages; install one at a time",
            found.len()
        ),
    }
}

/// Copy the regular files and directories of `from` into the new `to`;
/// anything else (a link, a FIFO) refuses the package.
fn copy_package(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if kind.is_dir() {
            copy_package(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).with_context(|| format!("copying {}", src.display()))?;
        } else {
            bail!("{} is not a regular file or directory", src.display());
        }
    }
    Ok(())
}

/// The grants the flags ask for, as `plugins.entries.<id>.grants`.
fn grants_of(flags: &InstallGrants, package: &PluginPackage) -> anyhow::Result<Value> {
    let mut grants = serde_json::Map::new();
    let requested = &package.manifest.capabilities;
    let mut filesystem = Vec::new();
    for mount in &flags.fs {
        let (guest, host) = mount
            .split_once('=')
            .with_context(|| format!("--fs {mount}: write GUEST=HOST"))?;
        let Some(asked) = requested.filesystem.iter().find(|d| d.guest_path == guest) else {
            bail!(
                "--fs {mount}: the plugin does not ask for {guest} (it asks for: {})",
                requested
                    .filesystem
                    .iter()
                    .map(|d| d.guest_path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        let access = match asked.access {
            clawhost_config::Access::ReadOnly => "read-only",
            clawhost_config::Access::ReadWrite => "read-write",
        };
        filesystem.push(json!({"guestPath": guest, "hostPath": host, "access": access}));
    }
    if !filesystem.is_empty() {
        grants.insert("filesystem".into(), filesystem.into());
    }
    if !flags.env.is_empty() {
        grants.insert("env".into(), json!(flags.env));
    }
    for capability in &flags.grant {
        match capability.as_str() {
            "harness" | "toolResults" | "compaction" => {
                grants.insert(capability.clone(), true.into());
            }
            other => bail!("--grant {other}: one of harness, toolResults, compaction"),
        }
    }
    Ok(Value::Object(grants))
}

/// Add `id` to `plugins.allow` when the config has an allowlist without it.
fn allow(file: &mut ConfigFile, id: &str) -> anyhow::Result<()> {
    if let Some(Value::Array(list)) = file.get("plugins.allow")? {
        if !list.iter().any(|v| v == id) {
            file.set(&format!("plugins.allow[{}]", list.len()), &json!(id))?;
        }
    }
    Ok(())
}

/// Remove `id` from the list at `key`, if it is there.
fn drop_from(file: &mut ConfigFile, key: &str, id: &str) -> anyhow::Result<bool> {
    if let Some(Value::Array(list)) = file.get(key)? {
        if let Some(i) = list.iter().position(|v| v == id) {
            file.remove(&format!("{key}[{i}]"))?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Make the config look for packages in the install dir.
fn search_install_root(file: &mut ConfigFile, config: &Config, root: &Path) -> anyhow::Result<()> {
    let wanted = std::path::absolute(root)?;
    let listed = config
        .plugins
        .paths
        .iter()
        .chain(&config.plugins.load.paths)
        .any(|p| std::path::absolute(config.resolve(p)).is_ok_and(|p| p == wanted));
    if !listed {
        let n = config.plugins.paths.len();
        file.set(
            &format!("plugins.paths[{n}]"),
            &json!(format!("./{INSTALL_DIR}")),
        )?;
    }
    Ok(())
}

/// Install the package at `source` (a directory, a `.tar`/`.tar.gz`
/// archive, or `oci://…` in a registry, which may stay silent for at most
/// `registry_timeout`) for the config at `path`: verify that it loads under
/// the requested grants, copy it into `plugins/<id>` beside the config, and
/// record its sha256 pin (from a registry, its pinned `source` too), its
/// grants and (when the config has an allowlist) its id. `json`: print the
/// installed plugin as JSON.
pub async fn install(
    path: &Path,
    source: &Path,
    flags: &InstallGrants,
    registry_timeout: std::time::Duration,
    json: bool,
) -> anyhow::Result<()> {
    let current = if path.exists() {
        Config::load(path)?
    } else {
        Config {
            base_dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            ..Config::default()
        }
    };
    let unpacked = tempfile::tempdir().context("creating a directory to unpack into")?;
    let mut fetched = None;
    let package_dir = if crate::plugin_oci::is_oci(source) {
        fetched = Some(
            crate::plugin_oci::fetch(source, unpacked.path(), &current, registry_timeout).await?,
        );
        unpacked.path().to_path_buf()
    } else if source.is_dir() {
        source.to_path_buf()
    } else if source.is_file() {
        unpack(source, unpacked.path())?;
        package_in(unpacked.path())?
    } else {
        bail!("{}: no such package directory or archive", source.display());
    };
    let package = PluginPackage::read(&package_dir)?;
    let id = package.manifest.id.clone();
    if !package.component_path().is_file() {
        bail!(
            "{} has no built component ({}); build it first: clawhost plugin build {}",
            package_dir.display(),
            package.manifest.component.display(),
            package_dir.display()
        );
    }
    let root = install_root(path);
    let dest = root.join(&id);
    if dest.exists() && !flags.force {
        bail!(
            "`{id}` is already installed at {}; `plugins uninstall {id}` first, or --force",
            dest.display()
        );
    }
    // Stage beside the destination, so the final step is one rename.
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let staged = tempfile::Builder::new()
        .prefix(&format!(".{id}-"))
        .tempdir_in(&root)?;
    copy_package(&package_dir, staged.path())?;
    let staged_package = PluginPackage::read(staged.path())?;
    let component = staged_package.component_path();
    let bytes =
        std::fs::read(&component).with_context(|| format!("reading {}", component.display()))?;
    let sha256 = clawhost_plugin_runtime::sha256_hex(&bytes);

    let mut file = ConfigFile::open(path)?;
    search_install_root(&mut file, &current, &root)?;
    file.set(&format!("plugins.entries.{id}.sha256"), &json!(sha256))?;
    if let Some(fetched) = &fetched {
        file.set(
            &format!("plugins.entries.{id}.source"),
            &json!(fetched.pinned),
        )?;
    }
    let grants = grants_of(flags, &staged_package)?;
    if grants.as_object().is_some_and(|g| !g.is_empty()) {
        file.set(&format!("plugins.entries.{id}.grants"), &grants)?;
    }
    allow(&mut file, &id)?;
    drop_from(&mut file, "plugins.deny", &id)?;

    // Verify: the staged package loads under the edited config.
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut config = Config::from_json_str(&file.text(), &base)
        .with_context(|| format!("reading {} as edited", path.display()))?;
    config.source = Some(path.to_path_buf());
    let mut host = PluginHost::new(&config).context("setting up the plugin engine")?;
    let loaded = host
        .load_package(staged.path())
        .await
        .with_context(|| format!("`{id}` does not load; nothing was installed"))?;
    let status = loaded.status();
    if status.sha256 != sha256 {
        bail!("`{id}`: the component changed while it was being installed");
    }

    if dest.exists() {
        std::fs::remove_dir_all(&dest).with_context(|| format!("removing {}", dest.display()))?;
    }
    let staged = staged.keep();
    std::fs::rename(&staged, &dest).with_context(|| format!("moving into {}", dest.display()))?;
    if let Err(e) = file.save() {
        let _ = std::fs::remove_dir_all(&dest);
        return Err(e.into());
    }
    if json {
        let mut doc = crate::plugin_report::status_json(&status);
        doc["dir"] = json!(dest);
        doc["config"] = json!(path);
        say!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        say!("{}", crate::transcript::render_status(&status));
        say!("installed {id} {} into {}", status.version, dest.display());
        say!("pinned sha256 {sha256} in {}", path.display());
        if let Some(fetched) = &fetched {
            say!("from {}", fetched.pinned);
            if let Some(signer) = &fetched.signer {
                say!("signed by `{signer}` (plugins.trust)");
            }
        }
    }
    let requested = &staged_package.manifest.capabilities;
    for dir in &requested.filesystem {
        if !flags
            .fs
            .iter()
            .any(|m| m.split('=').next() == Some(dir.guest_path.as_str()))
        {
            esay!(
                "note: it asks for {} ({:?}), not granted: add --fs {}=<host dir>",
                dir.guest_path,
                dir.access,
                dir.guest_path
            );
        }
    }
    for name in &requested.env {
        if !flags.env.contains(name) {
            esay!("note: it asks to read ${name}, not granted: add --env {name}");
        }
    }
    Ok(())
}

/// Uninstall `id`: remove the package `install` put beside the config and
/// its entry and allowlist line (`json`: say so as JSON).
pub fn uninstall(path: &Path, id: &str, json: bool) -> anyhow::Result<()> {
    let dest = install_root(path).join(id);
    let installed = PluginPackage::read(&dest).is_ok_and(|p| p.manifest.id == id);
    let mut file = ConfigFile::open(path)?;
    let had_entry = file.remove(&format!("plugins.entries.{id}"))?;
    let was_allowed = drop_from(&mut file, "plugins.allow", id)?;
    if !installed && !had_entry && !was_allowed {
        bail!(
            "`{id}` is not installed here ({} has no such package)",
            dest.display()
        );
    }
    file.save()?;
    if installed {
        std::fs::remove_dir_all(&dest).with_context(|| format!("removing {}", dest.display()))?;
    } else {
        esay!(
            "warning: no package of `{id}` is in {}; a package elsewhere on plugins.paths still loads, unpinned",
            install_root(path).display()
        );
    }
    if json {
        let removed = installed.then_some(&dest);
        say!("{}", json!({"id": id, "removed": removed, "config": path}));
    } else {
        if installed {
            say!("removed {}", dest.display());
        }
        say!("removed plugins.entries.{id} from {}", path.display());
    }
    Ok(())
}

/// Enable or disable `id` (`plugins.entries.<id>.enabled`); enabling also
/// takes it off `plugins.deny` and onto an allowlist the config has
/// (`json`: say so as JSON).
pub fn set_enabled(path: &Path, id: &str, enabled: bool, json: bool) -> anyhow::Result<()> {
    let config = Config::load(path)?;
    let known = config
        .plugins
        .paths
        .iter()
        .chain(&config.plugins.load.paths)
        .flat_map(|p| clawhost_plugin_runtime::discover(&config.resolve(p)).unwrap_or_default())
        .any(|dir| PluginPackage::read(&dir).is_ok_and(|p| p.manifest.id == id));
    if enabled && !known {
        bail!("no package on plugins.paths has the id `{id}`");
    }
    let mut file = ConfigFile::open(path)?;
    file.set(&format!("plugins.entries.{id}.enabled"), &json!(enabled))?;
    if enabled {
        allow(&mut file, id)?;
        if drop_from(&mut file, "plugins.deny", id)? {
            esay!("took `{id}` off plugins.deny");
        }
    }
    file.save()?;
    if json {
        say!("{}", json!({"id": id, "enabled": enabled, "config": path}));
    } else {
        say!(
            "{} {id} in {}",
            if enabled { "enabled" } else { "disabled" },
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(entries: &[(&str, tar::EntryType, &[u8])]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.tar");
        let mut builder = tar::Builder::new(std::fs::File::create(&path).unwrap());
        for (name, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            if *kind == tar::EntryType::Symlink {
                header.set_link_name("/etc").unwrap();
            }
            // Written raw so that `..` survives into the archive.
            let bytes = name.as_bytes();
            header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.finish().unwrap();
        (dir, path)
    }

    #[test]
    fn a_hostile_archive_is_refused_and_writes_nothing_outside() {
        for (name, kind) in [
            ("../escape.txt", tar::EntryType::Regular),
            ("/abs.txt", tar::EntryType::Regular),
            ("pkg/link", tar::EntryType::Symlink),
            ("pkg/fifo", tar::EntryType::Fifo),
        ] {
            let (_keep, path) = archive(&[(name, kind, b"x")]);
            let into = tempfile::tempdir().unwrap();
            let out = into.path().join("in");
            std::fs::create_dir(&out).unwrap();
            let err = unpack(&path, &out).unwrap_err().to_string();
            assert!(
                err.contains("leaves the package") || err.contains("not a regular file"),
                "{name}: {err}"
            );
            assert!(!into.path().join("escape.txt").exists());
        }
    }

    #[test]
    fn an_archive_of_too_many_entries_is_refused() {
        let names: Vec<String> = (0..=MAX_ARCHIVE_ENTRIES)
            .map(|i| format!("d{i}/"))
            .collect();
        let entries: Vec<(&str, tar::EntryType, &[u8])> = names
            .iter()
            .map(|n| (n.as_str(), tar::EntryType::Directory, &b""[..]))
            .collect();
        let (_keep, path) = archive(&entries);
        let into = tempfile::tempdir().unwrap();
        let err = unpack(&path, into.path()).unwrap_err().to_string();
        assert!(err.contains("more than 10000 entries"), "{err}");
    }

    #[test]
    fn a_plain_archive_unpacks_to_its_package() {
        let (_keep, path) = archive(&[
            ("pkg/", tar::EntryType::Directory, b""),
            ("pkg/openclaw.plugin.json", tar::EntryType::Regular, b"{}"),
        ]);
        let into = tempfile::tempdir().unwrap();
        unpack(&path, into.path()).unwrap();
        assert_eq!(package_in(into.path()).unwrap(), into.path().join("pkg"));
    }
}
