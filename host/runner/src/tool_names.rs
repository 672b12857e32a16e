//! Which plugin tools are offered under a name: a name two plugins declare
//! (ignoring ASCII case) is offered by neither, whatever order they load in,
//! and a plugin replaces a built-in tool only where the operator says so
//! (`plugins.entries.<id>.replaceBuiltins`).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use clawhost_config::Config;
use clawhost_plugin_runtime::LoadedPlugin;
use clawhost_tools::Tool;

/// A plugin tool that is not offered, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WithheldTool {
    /// The plugin that declares it.
    pub plugin: String,
    /// The tool's name.
    pub tool: String,
    /// Why it is not offered, with the way to offer it.
    pub reason: String,
}

/// Each plugin's tools that may be offered (in `plugins`' order) and those
/// withheld. `builtins` are the names of the host's own tools.
pub(crate) fn offered_tools(
    config: &Config,
    plugins: &[Arc<LoadedPlugin>],
    builtins: &[String],
) -> (Vec<Vec<Arc<dyn Tool>>>, Vec<WithheldTool>) {
    let mut claims: HashMap<String, BTreeSet<&str>> = HashMap::new();
    for plugin in plugins {
        for tool in plugin.tools() {
            let key = tool.spec().name.to_ascii_lowercase();
            claims.entry(key).or_default().insert(plugin.id());
        }
    }
    let mut withheld = Vec::new();
    let offered = plugins
        .iter()
        .map(|plugin| {
            let id = plugin.id();
            let mut keep = Vec::new();
            for tool in plugin.tools() {
                let name = tool.spec().name.clone();
                let key = name.to_ascii_lowercase();
                let reason = match claims.get(&key) {
                    Some(ids) if ids.len() > 1 => Some(format!(
                        "plugins {} all declare a tool named `{name}` (ignoring case), so none of them is offered; deny or remove all but one plugin",
                        ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
                    )),
                    _ if builtins.iter().any(|b| b.eq_ignore_ascii_case(&name))
                        && !replaces(config, id, &name) =>
                    {
                        Some(format!(
                            "`{name}` is a built-in tool; set plugins.entries.{id}.replaceBuiltins: [\"{name}\"] to offer the plugin's instead"
                        ))
                    }
                    _ => None,
                };
                match reason {
                    Some(reason) => {
                        tracing::warn!(plugin = id, tool = %name, %reason, "plugin tool not offered");
                        withheld.push(WithheldTool {
                            plugin: id.to_string(),
                            tool: name,
                            reason,
                        });
                    }
                    None => keep.push(tool),
                }
            }
            keep
        })
        .collect();
    (offered, withheld)
}

fn replaces(config: &Config, plugin: &str, tool: &str) -> bool {
    config
        .plugins
        .entries
        .get(plugin)
        .is_some_and(|e| e.replace_builtins.iter().any(|b| b == tool))
}
