//! `clawhost config`: check a config file whole, or read one key of it.

use std::path::Path;

use anyhow::Context;
use clawhost_config::Config;
use clawhost_llm::ModelRuntimes;

/// What to do.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Action {
    /// Parse and check the file (keys, types, paths, `${VAR}`s, providers,
    /// agents) and say which file it was.
    Validate,
    /// Print the value at a dotted key (`plugins.limits.memoryMb`,
    /// `agents.list[0].model`) as the file gives it (`${VAR}`s unexpanded).
    Get {
        /// The key.
        key: String,
    },
}

/// A dotted key (`a.b[0].c`) as a JSON pointer (`/a/b/0/c`).
fn pointer(key: &str) -> String {
    key.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|p| !p.is_empty())
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// Run `clawhost config` on the file at `path`.
pub fn run(path: &Path, action: Action) -> anyhow::Result<()> {
    match action {
        Action::Validate => {
            let config = Config::load(path)?;
            let set = ModelRuntimes::new()
                .rebuild(&config)
                .context("building the model runtime generation")?;
            say!(
                "{}: valid · {} agent(s) · {} provider(s)",
                path.display(),
                set.agents.len(),
                set.agents.values().next().map_or(0, |g| g.auth.len())
            );
        }
        Action::Get { key } => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let value: serde_json::Value =
                json5::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
            let found = value
                .pointer(&pointer(&key))
                .with_context(|| format!("{} does not set `{key}`", path.display()))?;
            say!("{}", serde_json::to_string_pretty(found)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn dotted_keys_become_pointers() {
        assert_eq!(super::pointer("a.b[0].c"), "/a/b/0/c");
        assert_eq!(
            super::pointer("plugins.entries.x/y"),
            "/plugins/entries/x~1y"
        );
    }
}
