//! `resolve_exec_env` (API 0.2.3 `prepare-hooks`): environment variables
//! plugins add to a command the host's `exec` tool runs. The runner only
//! collects them; the tool keeps the names each plugin was granted.

use crate::catalog::{CallContext, HookEvent, HookKind, HookOutcome};
use crate::runner::{HookDecisionRecord, HookError, HookRunner};

/// A command the host's `exec` tool is about to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecEnvEvent {
    /// The command (run by `/bin/sh -c`).
    pub command: String,
    /// Its working directory, relative to the workspace.
    pub cwd: String,
    /// The tool call's id.
    pub call_id: String,
    /// The run.
    pub context: CallContext,
}

/// What `resolve_exec_env` handlers answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExecEnvRun {
    /// Each handler's variables, by descending priority: (plugin id, name,
    /// value).
    pub vars: Vec<(String, String, String)>,
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
    /// Set when a handler whose fail policy is `block` failed: the command
    /// must not run.
    pub blocked: Option<String>,
}

impl HookRunner {
    /// Run `resolve_exec_env`: handlers by descending priority, each seeing
    /// the command. A failing handler adds nothing (the command runs
    /// without its variables), unless its fail policy is `block`.
    pub async fn resolve_exec_env(&self, event: &ExecEnvEvent) -> ExecEnvRun {
        let kind = HookKind::ResolveExecEnv;
        let mut run = ExecEnvRun::default();
        for reg in self.handlers(kind) {
            match reg.handler.handle(HookEvent::ResolveExecEnv(event)).await {
                Ok(HookOutcome::ResolveExecEnv(vars)) => {
                    let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
                    let said = format!("set {}", names.join(", "));
                    run.decisions.push(Self::record(kind, &reg.plugin_id, said));
                    run.vars.extend(
                        vars.into_iter()
                            .map(|(name, value)| (reg.plugin_id.clone(), name, value)),
                    );
                }
                other => {
                    let error = HookError::unusable(kind, other);
                    if let Some(reason) = reg.failure(&error, &mut run.decisions) {
                        run.blocked = Some(reason);
                        return run;
                    }
                }
            }
        }
        run
    }
}
