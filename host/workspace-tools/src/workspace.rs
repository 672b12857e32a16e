//! An agent's workspace directory, and the confinement of every path a tool
//! is given to it.

use clawhost_agent_core::ToolError;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

/// Why a path was refused or a workspace could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// An absolute path outside the workspace.
    #[error("`{0}` is outside the workspace")]
    Outside(String),
    /// A path with a `..` component.
    #[error("`{0}`: paths may not contain `..`")]
    ParentDir(String),
    /// The workspace directory could not be created or opened.
    #[error("the workspace {path} cannot be opened: {reason}")]
    Open {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// One workspace: its canonical root and a capability handle on it. Every
/// file operation goes through the handle, which refuses to leave the
/// directory (by `..`, an absolute path or a symlink).
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
}

impl Workspace {
    /// Open (creating it if missing) the workspace at `root`.
    pub fn open(root: &Path) -> Result<Self, WorkspaceError> {
        let fail = |e: std::io::Error| WorkspaceError::Open {
            path: root.to_path_buf(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(root).map_err(fail)?;
        let root = root.canonicalize().map_err(fail)?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority()).map_err(fail)?;
        Ok(Self { root, dir })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The capability handle on the root.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// `path` (as a tool was given it) relative to the root: a relative
    /// path, or an absolute one inside the root; `""` and `.` are the root.
    /// `..` is refused outright, so a path means what it says.
    pub fn relative(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let given = Path::new(path);
        let rel = if given.is_absolute() {
            given
                .strip_prefix(&self.root)
                .map_err(|_| WorkspaceError::Outside(path.into()))?
        } else {
            given
        };
        let mut out = PathBuf::new();
        for part in rel.components() {
            match part {
                Component::Normal(p) => out.push(p),
                Component::CurDir => {}
                Component::ParentDir => return Err(WorkspaceError::ParentDir(path.into())),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(WorkspaceError::Outside(path.into()))
                }
            }
        }
        if out.as_os_str().is_empty() {
            out.push(".");
        }
        Ok(out)
    }

    /// The real path of directory `rel` for walkers that need one: opened
    /// through the handle first (a symlink out of the workspace fails), then
    /// checked to resolve inside the root.
    pub fn real_dir(&self, rel: &Path) -> Result<PathBuf, ToolError> {
        self.dir
            .open_dir(rel)
            .map_err(|e| format!("{}: {e}", rel.display()))?;
        let real = self
            .root
            .join(rel)
            .canonicalize()
            .map_err(|e| format!("{}: {e}", rel.display()))?;
        if !real.starts_with(&self.root) {
            return Err(WorkspaceError::Outside(rel.display().to_string()).into());
        }
        Ok(real)
    }
}

/// The workspace of each agent: its own when configured, else the default;
/// each opened once, on first use.
#[derive(Debug)]
pub struct Workspaces {
    default: PathBuf,
    per_agent: HashMap<String, PathBuf>,
    open: Mutex<HashMap<PathBuf, Arc<Workspace>>>,
}

impl Workspaces {
    /// Workspaces rooted at `default`, with `per_agent` overrides.
    pub fn new(default: PathBuf, per_agent: HashMap<String, PathBuf>) -> Self {
        Self {
            default,
            per_agent,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Agent `agent_id`'s workspace.
    pub fn for_agent(&self, agent_id: &str) -> Result<Arc<Workspace>, WorkspaceError> {
        let root = self.per_agent.get(agent_id).unwrap_or(&self.default);
        let mut open = clawhost_agent_core::lock(&self.open);
        if let Some(ws) = open.get(root) {
            return Ok(ws.clone());
        }
        let ws = Arc::new(Workspace::open(root)?);
        open.insert(root.clone(), ws.clone());
        Ok(ws)
    }
}

/// A path the tool may not use is an invalid parameter; a workspace that
/// does not open is a failure.
impl From<WorkspaceError> for ToolError {
    fn from(e: WorkspaceError) -> Self {
        match e {
            WorkspaceError::Outside(_) | WorkspaceError::ParentDir(_) => {
                ToolError::InvalidParams(e.to_string())
            }
            WorkspaceError::Open { .. } => ToolError::Failed(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_inside_the_workspace_or_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::open(tmp.path()).unwrap();
        assert_eq!(ws.relative("a/b.txt").unwrap(), Path::new("a/b.txt"));
        assert_eq!(ws.relative("./a/./b").unwrap(), Path::new("a/b"));
        assert_eq!(ws.relative("").unwrap(), Path::new("."));
        let inside = ws.root().join("x/y");
        assert_eq!(
            ws.relative(inside.to_str().unwrap()).unwrap(),
            Path::new("x/y")
        );
        assert!(matches!(
            ws.relative("/etc/passwd"),
            Err(WorkspaceError::Outside(_))
        ));
        assert!(matches!(
            ws.relative("a/../../etc"),
            Err(WorkspaceError::ParentDir(_))
        ));
        // A symlink out of the workspace is not a way out.
        std::os::unix::fs::symlink("/etc", ws.root().join("out")).unwrap();
        assert!(ws.dir().read_to_string("out/passwd").is_err());
        assert!(ws.real_dir(Path::new("out")).is_err());
    }
}
