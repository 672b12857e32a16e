//! Resource packages. A package's `package.json` may declare, under an
//! `"openclaw"` key, `extensions`, `skills`, `prompts` and `themes` as file
//! paths or globs relative to the package root; a type it does not list falls
//! back to the conventional `extensions/`, `skills/`, `prompts/`, `themes/`
//! directory. Paths or globs that escape the package root are refused.
//!
//! Extensions are plugin package directories (holding `openclaw.plugin.json`,
//! loaded through the plugin allowlist); skills and prompts are markdown;
//! themes are JSON.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};
use serde_json::Value;

/// The four resource types.
pub const KINDS: [&str; 4] = ["extensions", "skills", "prompts", "themes"];

/// Errors discovering or loading a package.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// Reading failed.
    #[error("{path}: {reason}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A path or glob leaves the package root.
    #[error("package {package}: `{pattern}` in openclaw.{kind} escapes the package root; refused")]
    Escape {
        /// Package root.
        package: PathBuf,
        /// Resource type.
        kind: String,
        /// The offending entry.
        pattern: String,
    },
    /// `package.json` is malformed.
    #[error("package {package}: {reason}")]
    Manifest {
        /// Package root.
        package: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// What a package provides, as resolved paths inside its root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourcePackage {
    /// Canonical package root.
    pub root: PathBuf,
    /// `name` from package.json, or the directory name.
    pub name: String,
    /// Plugin package directories.
    pub extensions: Vec<PathBuf>,
    /// Skill markdown files.
    pub skills: Vec<PathBuf>,
    /// Prompt template markdown files.
    pub prompts: Vec<PathBuf>,
    /// Theme JSON files.
    pub themes: Vec<PathBuf>,
}

fn escapes(pattern: &str) -> bool {
    let p = Path::new(pattern);
    p.is_absolute()
        || pattern.starts_with('~')
        || p.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        })
}

fn default_match(kind: &str, rel: &Path) -> bool {
    let ext = rel.extension().and_then(|e| e.to_str()).unwrap_or_default();
    match kind {
        "skills" | "prompts" => ext == "md",
        "themes" => ext == "json",
        _ => false,
    }
}

/// Resolve one resource type of a package.
fn resolve(
    root: &Path,
    kind: &str,
    declared: Option<&Value>,
) -> Result<Vec<PathBuf>, ResourceError> {
    let patterns: Vec<String> = match declared {
        None => vec![],
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ResourceError::Manifest {
                        package: root.into(),
                        reason: format!("openclaw.{kind} entries must be strings"),
                    })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ResourceError::Manifest {
                package: root.into(),
                reason: format!("openclaw.{kind} must be a string or a list of strings"),
            })
        }
    };
    for p in &patterns {
        if escapes(p) {
            return Err(ResourceError::Escape {
                package: root.into(),
                kind: kind.into(),
                pattern: p.clone(),
            });
        }
    }
    let conventional = root.join(kind);
    let mut found = Vec::new();
    if declared.is_none() {
        // Fallback: the conventional directory.
        if kind == "extensions" {
            if let Ok(rd) = std::fs::read_dir(&conventional) {
                found.extend(
                    rd.filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| p.join("openclaw.plugin.json").is_file()),
                );
            }
        } else if conventional.is_dir() {
            for entry in walkdir::WalkDir::new(&conventional)
                .follow_links(false)
                .into_iter()
                .filter_map(Result::ok)
            {
                let rel = entry
                    .path()
                    .strip_prefix(root)
                    .unwrap_or(entry.path())
                    .to_path_buf();
                if entry.file_type().is_file() && default_match(kind, &rel) {
                    found.push(entry.path().to_path_buf());
                }
            }
        }
    } else {
        let mut set = GlobSetBuilder::new();
        for (i, p) in patterns.iter().enumerate() {
            // As in OpenClaw's globs, `*` stays within one path part; `**`
            // crosses them.
            let glob = GlobBuilder::new(p.trim_end_matches('/'))
                .literal_separator(true)
                .build()
                .map_err(|e| ResourceError::Manifest {
                    package: root.into(),
                    reason: format!(
                        "package.json: `openclaw.{kind}[{i}]` is not a valid glob: {e}"
                    ),
                })?;
            set.add(glob);
        }
        let set = set.build().map_err(|e| ResourceError::Manifest {
            package: root.into(),
            reason: e.to_string(),
        })?;
        for entry in walkdir::WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .skip(1)
        {
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue; // the walk stays under root
            };
            if set.is_match(rel) {
                // An extension is a plugin package directory; the other
                // kinds are files.
                let wanted = if kind == "extensions" {
                    entry.path().join("openclaw.plugin.json").is_file()
                } else {
                    entry.file_type().is_file() || entry.file_type().is_symlink()
                };
                if wanted {
                    found.push(entry.path().to_path_buf());
                }
            }
        }
    }
    // A symlink may still point outside: check the real path.
    let mut out = Vec::new();
    for path in found {
        let real = path.canonicalize().map_err(|e| ResourceError::Read {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if !real.starts_with(root) {
            return Err(ResourceError::Escape {
                package: root.into(),
                kind: kind.into(),
                pattern: path.display().to_string(),
            });
        }
        out.push(real);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Discover what the package at `dir` provides.
pub fn discover(dir: &Path) -> Result<ResourcePackage, ResourceError> {
    let root = dir.canonicalize().map_err(|e| ResourceError::Read {
        path: dir.into(),
        reason: e.to_string(),
    })?;
    let manifest_path = root.join("package.json");
    let manifest: Value = match std::fs::read_to_string(&manifest_path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| ResourceError::Manifest {
            package: root.clone(),
            reason: format!("package.json: {e}"),
        })?,
        Err(_) => Value::Null,
    };
    let section = manifest.get("openclaw");
    if section.is_some_and(|s| !s.is_object()) {
        return Err(ResourceError::Manifest {
            package: root.clone(),
            reason: "`openclaw` must be an object".into(),
        });
    }
    let declared = |kind: &str| section.and_then(|s| s.get(kind));
    let name = manifest["name"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    Ok(ResourcePackage {
        extensions: resolve(&root, "extensions", declared("extensions"))?,
        skills: resolve(&root, "skills", declared("skills"))?,
        prompts: resolve(&root, "prompts", declared("prompts"))?,
        themes: resolve(&root, "themes", declared("themes"))?,
        name,
        root,
    })
}

/// A named text resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedText {
    /// File stem.
    pub name: String,
    /// Content.
    pub text: String,
}

/// Resources loaded from packages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    /// Plugin package directories to load (through the allowlist).
    pub extensions: Vec<PathBuf>,
    /// Skills, for the system prompt.
    pub skills: Vec<NamedText>,
    /// Prompt templates by name.
    pub prompts: Vec<NamedText>,
    /// Themes by name.
    pub themes: Vec<(String, Value)>,
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read(p: &Path) -> Result<String, ResourceError> {
    std::fs::read_to_string(p).map_err(|e| ResourceError::Read {
        path: p.into(),
        reason: e.to_string(),
    })
}

impl Resources {
    /// Discover and load every package.
    pub fn load(packages: &[PathBuf]) -> Result<Self, ResourceError> {
        let mut out = Resources::default();
        for dir in packages {
            let pkg = discover(dir)?;
            out.extensions.extend(pkg.extensions);
            for p in pkg.skills {
                out.skills.push(NamedText {
                    name: stem(&p),
                    text: read(&p)?,
                });
            }
            for p in pkg.prompts {
                out.prompts.push(NamedText {
                    name: stem(&p),
                    text: read(&p)?,
                });
            }
            for p in pkg.themes {
                let value = serde_json::from_str(&read(&p)?).map_err(|e| ResourceError::Read {
                    path: p.clone(),
                    reason: format!("theme is not JSON: {e}"),
                })?;
                out.themes.push((stem(&p), value));
            }
        }
        Ok(out)
    }

    /// The skills section appended to the system prompt (empty without skills).
    pub fn skills_prompt(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut s = String::from("\n\n# Skills\n");
        for skill in &self.skills {
            s.push_str(&format!("\n## {}\n{}\n", skill.name, skill.text.trim()));
        }
        s
    }
}

#[cfg(test)]
mod tests;
