//! `clawhost config`: check a config file whole, read, set or remove one
//! key of it, print its JSON Schema.

use std::path::Path;

use anyhow::Context;
use clawhost_config::edit::ConfigFile;
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
    /// Set a dotted key, keeping the file's comments and layout; the result
    /// is checked as a whole config before the file is replaced. The value
    /// is read as JSON5 (`64`, `true`, `["a"]`, `{k: 1}`), else taken as a
    /// string (`openai/gpt-4.1`). Creates the file when it does not exist.
    Set {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// Take the value as a string even when it reads as JSON5 (`"true"`).
        #[arg(long)]
        string: bool,
    },
    /// Remove a dotted key (the default applies again).
    Unset {
        /// The key.
        key: String,
    },
    /// Print the JSON Schema of the config file (for editors: save it and
    /// point the config's `"$schema"` at it).
    Schema,
}

/// The value `config set` writes.
fn value_of(text: &str, string: bool) -> serde_json::Value {
    if string {
        return text.into();
    }
    clawhost_config::read_json5_value(text).unwrap_or_else(|| text.into())
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
            let found = ConfigFile::open(path)?
                .get(&key)?
                .with_context(|| format!("{} does not set `{key}`", path.display()))?;
            say!("{}", serde_json::to_string_pretty(&found)?);
        }
        Action::Set { key, value, string } => {
            let value = value_of(&value, string);
            let mut file = ConfigFile::open(path)?;
            file.set(&key, &value)?;
            file.save()?;
            esay!("{}: set {key} = {value}", path.display());
        }
        Action::Unset { key } => {
            let mut file = ConfigFile::open(path)?;
            if !file.remove(&key)? {
                anyhow::bail!("{} does not set `{key}`", path.display());
            }
            file.save()?;
            esay!("{}: removed {key}", path.display());
        }
        Action::Schema => say!("{}", serde_json::to_string_pretty(&Config::json_schema())?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn values_are_json5_else_strings() {
        assert_eq!(super::value_of("64", false), json!(64));
        assert_eq!(super::value_of("[a]", false), json!("[a]"));
        assert_eq!(super::value_of("['a']", false), json!(["a"]));
        assert_eq!(
            super::value_of("openai/gpt-4.1", false),
            json!("openai/gpt-4.1")
        );
        assert_eq!(super::value_of("true", true), json!("true"));
    }
}
