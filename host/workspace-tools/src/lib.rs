//! Built-in host tools on the agent's workspace: `read`, `write`, `edit`,
//! `apply_patch`, `ls`, `find` and `grep` (`group:fs`), `exec` and `process`
//! (`group:runtime`), and `web_fetch` (`group:web`). Every path is confined
//! to the workspace directory (cap-std: no `..`, no symlink out, no absolute
//! path elsewhere). Like plugin tools, they are called through the one
//! dispatch path (policy, schema, hooks, approvals).

mod edit;
mod exec;
mod exec_env;
mod files;
mod patch;
mod search;
mod spec;
mod web_fetch;
mod workspace;

use std::collections::HashMap;
use std::sync::Arc;

use clawhost_config::Config;
use clawhost_tools::Tool;
use spec::Builtin;

pub use exec_env::ExecEnvHooks;
pub use workspace::{Workspace, WorkspaceError, Workspaces};

/// The workspace file tools (`group:fs`), resolving each run's workspace in
/// `workspaces`.
pub fn file_tools(workspaces: Arc<Workspaces>) -> Vec<Arc<dyn Tool>> {
    let w = || workspaces.clone();
    vec![
        Arc::new(Builtin(files::Read::new(w()))),
        Arc::new(Builtin(files::Write::new(w()))),
        Arc::new(Builtin(edit::Edit::new(w()))),
        Arc::new(Builtin(patch::ApplyPatch::new(w()))),
        Arc::new(Builtin(files::Ls::new(w()))),
        Arc::new(Builtin(search::Find::new(w()))),
        Arc::new(Builtin(search::Grep::new(w()))),
    ]
}

/// Every built-in workspace tool, set up from `config`: each agent's
/// workspace (`agents.list[].workspace`, else `agents.defaults.workspace`,
/// else `default_workspace`), `tools.exec` and `tools.web`; `exec` asks
/// `exec_env`'s `resolve_exec_env` hooks for its commands' variables.
pub fn builtin_tools(
    config: &Config,
    default_workspace: std::path::PathBuf,
    exec_env: &ExecEnvHooks,
) -> Vec<Arc<dyn Tool>> {
    let default = config
        .agents
        .defaults
        .workspace
        .as_ref()
        .map(|w| config.resolve(w))
        .unwrap_or(default_workspace);
    let per_agent: HashMap<String, std::path::PathBuf> = config
        .agents
        .list
        .iter()
        .filter_map(|a| Some((a.id.clone(), config.resolve(a.workspace.as_ref()?))))
        .collect();
    let workspaces = Arc::new(Workspaces::new(default, per_agent));
    let processes = Arc::new(exec::Processes::default());
    let mut tools = file_tools(workspaces.clone());
    tools.push(Arc::new(Builtin(exec::Exec::new(
        workspaces.clone(),
        config.tools.exec.clone(),
        processes.clone(),
        exec_env::ExecEnv::new(config, exec_env.clone()),
    ))));
    tools.push(Arc::new(Builtin(exec::Process::new(workspaces, processes))));
    tools.push(Arc::new(Builtin(web_fetch::WebFetch::new(
        config.tools.web.clone(),
    ))));
    tools
}
