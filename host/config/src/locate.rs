//! Where the configuration file is when no `-c` names it.

use std::path::{Path, PathBuf};

/// File names looked for in a directory, in order.
const NAMES: [&str; 2] = ["clawhost.json5", "clawhost.json"];

/// Why no configuration file was found.
#[derive(Debug, thiserror::Error)]
#[error("no config file: {}; give one with -c/--config", describe(.searched))]
pub struct NotFound {
    /// Every place looked at, in order.
    pub searched: Vec<PathBuf>,
}

fn describe(searched: &[PathBuf]) -> String {
    let places: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
    format!("looked for {}", places.join(", "))
}

/// The configuration file to use: `explicit` (`-c`) when given, else
/// `$CLAWHOST_CONFIG`, else `clawhost.json5` or `clawhost.json` in the
/// current directory, else in the user's config dir
/// (`$XDG_CONFIG_HOME/clawhost/`, else `~/.config/clawhost/`).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, NotFound> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    if let Some(path) = std::env::var_os("CLAWHOST_CONFIG").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let dirs = [Some(PathBuf::from(".")), user_dir()];
    let searched: Vec<PathBuf> = dirs
        .iter()
        .flatten()
        .flat_map(|d| NAMES.iter().map(move |n| d.join(n)))
        .collect();
    match searched.iter().find(|p| p.is_file()) {
        Some(found) => Ok(found.clone()),
        None => Err(NotFound { searched }),
    }
}

/// The user's clawhost config dir: `$XDG_CONFIG_HOME/clawhost`, else
/// `~/.config/clawhost`.
fn user_dir() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config")
}

/// clawhost's directory under an XDG base directory: `$<var>/clawhost` when
/// the variable is set and not empty, else `~/<home_default>/clawhost`
/// (`None` without a home).
pub fn xdg_dir(var: &str, home_default: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(home_default)))
        .map(|d| d.join("clawhost"))
}

/// The file a command that edits the config writes: the one [`locate`]
/// finds, else a new `clawhost.json5` in the user's config dir (created).
pub fn locate_or_new(explicit: Option<&Path>) -> Result<PathBuf, NotFound> {
    match locate(explicit) {
        Ok(path) => Ok(path),
        Err(not_found) => {
            let dir = user_dir().ok_or(not_found)?;
            let _ = std::fs::create_dir_all(&dir);
            Ok(dir.join(NAMES[0]))
        }
    }
}
