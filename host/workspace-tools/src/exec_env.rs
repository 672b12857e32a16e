//! The environment plugins add to an `exec` command (`resolve_exec_env`):
//! only the names the operator granted each plugin (`grants.execEnv`),
//! never one the host sets or one that makes the shell or the loader run
//! other code.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use clawhost_agent_core::{RunContext, ToolError};
use clawhost_config::Config;
use clawhost_hooks::{CallContext, ExecEnvEvent, HookKind, HookRunner};

/// Names no plugin sets, whatever its grant: the shell's and the dynamic
/// loader's start-up variables (they run other code than the command the
/// operator approved) and what the host sets itself.
const NEVER: [&str; 14] = [
    "PATH",
    "HOME",
    "LANG",
    "USER",
    "TZ",
    "TERM",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
];
/// Prefixes no plugin sets (the loader's and exported shell functions).
const NEVER_PREFIX: [&str; 3] = ["LD_", "DYLD_", "BASH_FUNC_"];
/// Longest value a plugin may set.
const MAX_VALUE: usize = 16 << 10;
/// Most variables one command gets from plugins.
const MAX_VARS: usize = 64;

/// The hooks `exec` asks, bound once the runner has wired its plugins (the
/// host tools are built before the hook runner); unbound, none is asked.
#[derive(Clone, Default)]
pub struct ExecEnvHooks(Arc<OnceLock<Arc<HookRunner>>>);

impl ExecEnvHooks {
    /// Ask `hooks` from now on (the first binding stays).
    pub fn bind(&self, hooks: Arc<HookRunner>) {
        let _ = self.0.set(hooks);
    }
}

/// The environment of one command: the hooks and each plugin's grant.
pub(crate) struct ExecEnv {
    hooks: ExecEnvHooks,
    grants: BTreeMap<String, Vec<String>>,
}

impl ExecEnv {
    pub(crate) fn new(config: &Config, hooks: ExecEnvHooks) -> Self {
        let grants = config
            .plugins
            .entries
            .iter()
            .filter(|(_, e)| !e.grants.exec_env.is_empty())
            .map(|(id, e)| (id.clone(), e.grants.exec_env.clone()))
            .collect();
        Self { hooks, grants }
    }

    /// The variables plugins set for `command`: a higher-priority handler's
    /// value of a name wins; a name outside the plugin's grant, or one no
    /// plugin sets, is left out (and said in the log).
    pub(crate) async fn resolve(
        &self,
        ctx: &RunContext,
        call_id: &str,
        command: &str,
        cwd: &str,
    ) -> Result<Vec<(String, String)>, ToolError> {
        let Some(hooks) = self.hooks.0.get() else {
            return Ok(Vec::new());
        };
        if hooks.handlers(HookKind::ResolveExecEnv).next().is_none() {
            return Ok(Vec::new());
        }
        let run = hooks
            .resolve_exec_env(&ExecEnvEvent {
                command: command.into(),
                cwd: cwd.into(),
                call_id: call_id.into(),
                context: CallContext {
                    agent_id: ctx.agent_id.clone(),
                    session_id: ctx.session_id.clone(),
                    model_ref: ctx.model_ref.clone(),
                },
            })
            .await;
        clawhost_tools::report_hook_decisions(ctx, call_id, run.decisions);
        if let Some(reason) = run.blocked {
            return Err(ToolError::failed(reason));
        }
        Ok(self.admitted(run.vars))
    }

    /// What of the handlers' `(plugin, name, value)` answers is set, in
    /// priority order: the first value of a name, only names the plugin
    /// may set, at most [`MAX_VARS`].
    fn admitted(&self, answered: Vec<(String, String, String)>) -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = Vec::new();
        for (plugin, name, value) in answered {
            if vars.iter().any(|(n, _)| *n == name) {
                continue;
            }
            match self.refusal(&plugin, &name, &value) {
                Some(why) => {
                    tracing::warn!(%plugin, variable = %name, "resolve_exec_env: not set: {why}")
                }
                None if vars.len() < MAX_VARS => vars.push((name, value)),
                None => {
                    tracing::warn!(%plugin, variable = %name, "resolve_exec_env: not set: more than {MAX_VARS} variables")
                }
            }
        }
        vars
    }

    /// Why `plugin` may not set `name` to `value`, if it may not.
    fn refusal(&self, plugin: &str, name: &str, value: &str) -> Option<String> {
        let valid = name
            .chars()
            .enumerate()
            .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
        if name.is_empty() || !valid {
            return Some("not a variable name".into());
        }
        if NEVER.contains(&name) || NEVER_PREFIX.iter().any(|p| name.starts_with(p)) {
            return Some("no plugin sets this variable".into());
        }
        if value.len() > MAX_VALUE || value.contains('\0') {
            return Some(format!(
                "the value is longer than {MAX_VALUE} bytes or holds a NUL"
            ));
        }
        let granted = self.grants.get(plugin).is_some_and(|patterns| {
            patterns.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => p == name,
            })
        });
        (!granted).then(|| format!("not in plugins.entries.{plugin}.grants.execEnv"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(grants: &[(&str, &[&str])]) -> ExecEnv {
        ExecEnv {
            hooks: ExecEnvHooks::default(),
            grants: grants
                .iter()
                .map(|(id, names)| {
                    (
                        id.to_string(),
                        names.iter().map(|n| n.to_string()).collect(),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn only_granted_harmless_names_are_set() {
        let env = env(&[("p", &["TRACE_ID", "TL_*", "LD_PRELOAD", "*"])]);
        assert_eq!(env.refusal("p", "TRACE_ID", "x"), None);
        assert_eq!(env.refusal("p", "TL_SESSION", "x"), None);
        assert_eq!(env.refusal("p", "OTHER", "x"), None, "`*` grants any name");
        for never in ["LD_PRELOAD", "BASH_ENV", "PATH", "BASH_FUNC_ls%%", "DYLD_X"] {
            assert!(env.refusal("p", never, "x").is_some(), "{never}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B"] {
            assert!(env.refusal("p", bad, "x").is_some(), "{bad:?}");
        }
        assert!(env.refusal("p", "TRACE_ID", "a\0b").is_some());
        assert!(env
            .refusal("p", "TRACE_ID", &"x".repeat(MAX_VALUE + 1))
            .is_some());
        let why = env.refusal("q", "TRACE_ID", "x").unwrap();
        assert!(why.contains("plugins.entries.q.grants.execEnv"), "{why}");
    }

    #[test]
    fn the_first_value_of_a_name_wins_and_at_most_64_are_set() {
        let env = env(&[("a", &["*"]), ("b", &["*"])]);
        let mut answered = vec![
            ("a".to_string(), "X".to_string(), "from a".to_string()),
            ("b".to_string(), "X".to_string(), "from b".to_string()),
            ("a".to_string(), "LD_PRELOAD".to_string(), "x".to_string()),
        ];
        answered.extend((0..100).map(|i| ("b".to_string(), format!("V{i}"), "v".to_string())));
        let vars = env.admitted(answered);
        assert_eq!(vars.len(), MAX_VARS);
        assert_eq!(vars[0], ("X".to_string(), "from a".to_string()));
        assert!(vars.iter().all(|(n, _)| n != "LD_PRELOAD"));
        assert_eq!(vars[MAX_VARS - 1].0, format!("V{}", MAX_VARS - 2));
    }
}
