//! Running a session's turns on the runtime selection picks, and the
//! `/new`, `/reset` and status operations.

use std::sync::Arc;

use clawhost_agent_core::{
    estimate_tokens, ModelError, ModelErrorKind, PreparedTurn, Route, RunContext, SharedMessage,
    TurnError, TurnEvent, TurnMirror, TurnOutcome, UserInput,
};
use clawhost_harness::{
    select, PolicyScopes, Selection, SelectionError, SelectionRequest, BUILTIN,
};
use clawhost_llm::ModelRuntimeGeneration;

use clawhost_hooks::{
    AgentEndEvent, AgentRunEvent, BeforePromptBuildEvent, HookEvent, SessionEndEvent,
    SessionStartEvent,
};

use crate::compact::{compact, CompactionHooks, CompactionRecord};
use crate::run_hooks::AttemptInput;
use crate::EmbeddedRunner;

/// The environment variable that forces the runtime of new or reset sessions.
pub const RUNTIME_ENV: &str = "OPENCLAW_AGENT_RUNTIME";

/// A conversation: its history and the runtime that owns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// Agent id.
    pub agent_id: String,
    /// The runtime recorded on the session after its first turn.
    pub runtime: Option<String>,
    /// How that runtime was selected (last turn).
    pub selection: Option<Selection>,
    /// Messages so far (the model context: after a compaction, the summary
    /// then the kept messages), shared with the transcript they came from
    /// and the model requests that carry them.
    pub history: Vec<SharedMessage>,
    /// Compactions made during the last turn, in order.
    pub compactions: Vec<CompactionRecord>,
    /// The selection reason recorded with the runtime (for resumed sessions).
    pub recorded_reason: Option<String>,
    /// The thread a native runtime (Codex, an ACP agent) keeps this session
    /// in, and the runtime's name and version, once one reported it.
    pub native_thread: Option<(String, String)>,
}

impl Session {
    /// A new, empty session.
    pub fn new(id: impl Into<String>, agent_id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            agent_id: agent_id.into(),
            runtime: None,
            selection: None,
            history: Vec::new(),
            compactions: Vec::new(),
            recorded_reason: None,
            native_thread: None,
        }
    }
}

/// Why a session turn failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The model ref does not resolve.
    #[error("{0}")]
    Model(ModelError),
    /// No runtime could be selected.
    #[error("runtime selection failed: {0}")]
    Selection(#[from] SelectionError),
    /// The built-in loop failed.
    #[error(transparent)]
    Turn(#[from] TurnError),
    /// A hook whose fail policy is `block` failed.
    #[error("turn stopped: {0}")]
    HookBlocked(String),
    /// The run was cancelled ([`RunContext::cancel`]) before it ended.
    #[error("turn aborted")]
    Aborted,
    /// A plugin harness failed.
    #[error("harness `{harness}` failed: {error}")]
    Harness {
        /// Harness id.
        harness: String,
        /// Its error.
        error: clawhost_agent_core::HarnessError,
    },
}

impl EmbeddedRunner {
    /// The provider route of `model_ref` in a generation.
    pub fn route(
        &self,
        generation: &ModelRuntimeGeneration,
        model_ref: &str,
    ) -> Result<Route, ModelError> {
        let (provider, model) = generation.registry.resolve(model_ref)?;
        Ok(Route {
            provider: provider.id.clone(),
            model: model.id.clone(),
            api: provider.config.api,
            base_url: provider.base_url(),
            authored_overrides: !provider.config.params.is_empty()
                || !model.params.is_empty()
                || !provider.config.headers.is_empty(),
        })
    }

    /// Runtime policy at every scope for an agent and model.
    pub fn policy(
        &self,
        generation: &ModelRuntimeGeneration,
        agent_id: &str,
        model_ref: &str,
    ) -> PolicyScopes {
        let resolved = generation.registry.resolve(model_ref).ok();
        let settings = self.config().agents.settings(agent_id);
        PolicyScopes {
            model: resolved.as_ref().and_then(|(_, m)| m.agent_runtime.clone()),
            provider: resolved
                .as_ref()
                .and_then(|(p, _)| p.config.agent_runtime.clone()),
            agent: settings
                .as_ref()
                .filter(|s| s.harness_from_entry)
                .and_then(|s| s.embedded_harness.clone()),
            defaults: self.config().agents.defaults.embedded_harness.clone(),
        }
    }

    /// Select the runtime for the session's next turn.
    pub async fn select_runtime(
        &self,
        session: &Session,
        generation: &ModelRuntimeGeneration,
        env_force: Option<&str>,
    ) -> Result<Selection, RunError> {
        let route = self
            .route(generation, &generation.model)
            .map_err(RunError::Model)?;
        // A pinned session keeps its runtime: no need to ask every harness.
        let supports = match session.runtime {
            None => self.harnesses().supports(&route).await,
            Some(_) => Vec::new(),
        };
        let registered = self.harnesses().ids();
        let policy = self.policy(generation, &session.agent_id, &generation.model);
        Ok(select(&SelectionRequest {
            session_runtime: session.runtime.as_deref(),
            env_force: if session.runtime.is_none() {
                env_force
            } else {
                None
            },
            policy: &policy,
            route: &route,
            registered: &registered,
            supports: &supports,
        })?)
    }

    /// Run one turn of a session on `generation`, with the runtime selection
    /// picks (reading `OPENCLAW_AGENT_RUNTIME` for new or reset sessions).
    /// `before_prompt_build` hooks may edit the prompt; the history is
    /// compacted first when it nears the model's context window, and
    /// compacted-then-retried (bounded) after a context-overflow error;
    /// `agent_end` observes the result. The session records the runtime and
    /// the turn's messages. Cancelling `ctx.cancel` drops the turn where it
    /// is (the model stream, a running guest) and ends it with
    /// [`RunError::Aborted`]; a turn on a native runtime is first given the
    /// grace its harness asked for to stop the runtime's own turn.
    pub async fn run_session_turn(
        &self,
        session: &mut Session,
        generation: Arc<ModelRuntimeGeneration>,
        ctx: &RunContext,
        user: impl Into<UserInput>,
    ) -> Result<TurnOutcome, RunError> {
        let user = user.into();
        let result = {
            let inner = self.run_session_turn_inner(session, generation, ctx, &user);
            tokio::pin!(inner);
            tokio::select! {
                biased;
                () = ctx.cancel.cancelled() => {
                    // A native runtime's harness is told (its process's
                    // `recv` says the turn was aborted) and may stop the
                    // runtime's own turn within its grace.
                    if let Some(grace) = ctx.stop_grace() {
                        let _ = tokio::time::timeout(grace, &mut inner).await;
                    }
                    Err(RunError::Aborted)
                }
                result = &mut inner => result,
            }
        };
        let (success, text, iterations) = match &result {
            Ok(o) => (true, o.answer.clone(), o.iterations),
            Err(e) => (false, e.to_string(), 0),
        };
        self.hooks()
            .observe(HookEvent::AgentEnd(&AgentEndEvent {
                session_id: Some(session.id.clone()),
                agent_id: session.agent_id.clone(),
                success,
                text,
                iterations,
            }))
            .await;
        result
    }

    async fn run_session_turn_inner(
        &self,
        session: &mut Session,
        generation: Arc<ModelRuntimeGeneration>,
        ctx: &RunContext,
        user: &UserInput,
    ) -> Result<TurnOutcome, RunError> {
        let user_text = user.text.as_str();
        let mut ctx = ctx.clone();
        let ctx = &mut ctx;
        let generation = self
            .resolve_model(session, generation, ctx, user_text)
            .await?;
        let ctx = &*ctx;
        let env = std::env::var(RUNTIME_ENV).ok();
        let selection = self
            .select_runtime(session, &generation, env.as_deref())
            .await?;
        session.compactions.clear();
        let mut turn = AgentRunEvent {
            session_id: Some(session.id.clone()),
            agent_id: session.agent_id.clone(),
            runtime: selection.runtime.clone(),
            model_ref: ctx.model_ref.clone(),
            prompt: user_text.into(),
        };
        let prepared = self.prepare_turn(ctx, &turn).await?;
        let built = self
            .hooks()
            .before_prompt_build(BeforePromptBuildEvent {
                session_id: Some(session.id.clone()),
                agent_id: session.agent_id.clone(),
                system: self.system_prompt(&session.agent_id),
                prompt: prepared,
            })
            .await;
        clawhost_tools::report_hook_decisions(ctx, "", built.decisions);
        if let Some(reason) = built.blocked {
            return Err(RunError::HookBlocked(reason));
        }
        let (system, prompt) = (built.system, built.prompt);
        self.gate_start(session, ctx, user_text).await?;
        turn.prompt = prompt.clone();
        self.gate_run(ctx, &turn).await?;
        if let Some(outcome) = self.claimed_reply(ctx, &turn, user).await? {
            return Ok(self.close_turn(session, selection, outcome));
        }
        let settings = self.config().agents.defaults.compaction.clone();
        let (_, model) = generation
            .registry
            .resolve(&generation.model)
            .map_err(RunError::Model)?;
        let threshold = model.context_window.saturating_sub(settings.reserve_tokens);
        let needed =
            estimate_tokens(&session.history) + estimate_tokens(&[user.message_with_text(&prompt)]);
        if needed > threshold {
            self.compact_session(session, &generation, ctx, "threshold")
                .await?;
        }
        let mut retries = 0;
        let outcome = loop {
            let attempt_no = retries + 1;
            self.attempt_input(
                session,
                ctx,
                AttemptInput {
                    attempt: attempt_no,
                    system: &system,
                    prompt: &prompt,
                },
            );
            let attempt = self
                .run_on_runtime(
                    &selection.runtime,
                    session,
                    &generation,
                    ctx,
                    (user, &prompt),
                    system.clone(),
                )
                .await;
            if let Some(thread) = native_thread(ctx) {
                session.native_thread = Some(thread);
            }
            match attempt {
                Err(e) if is_overflow(&e) && retries < settings.max_overflow_retries => {
                    retries += 1;
                    if !self
                        .compact_session(session, &generation, ctx, "overflow")
                        .await?
                    {
                        return Err(e);
                    }
                }
                other => {
                    let outcome = other?;
                    self.attempt_output(session, ctx, attempt_no, &outcome);
                    break outcome;
                }
            }
        };
        // `before_agent_finalize` may send the runtime back for another
        // pass: its reason is the turn's next message.
        let mut outcome = outcome;
        let mut revisions = 0;
        while let Some(reason) = self
            .revision(ctx, &turn, &outcome.answer, revisions)
            .await?
        {
            revisions += 1;
            let done = std::mem::take(&mut outcome.new_messages);
            let start = session.history.len();
            session
                .history
                .extend(done.iter().cloned().map(SharedMessage::from));
            let again = UserInput::from(reason.clone());
            // Each pass is an attempt the model-call observers see.
            let attempt = retries + 1 + revisions;
            self.attempt_input(
                session,
                ctx,
                AttemptInput {
                    attempt,
                    system: &system,
                    prompt: &reason,
                },
            );
            let pass = self
                .run_on_runtime(
                    &selection.runtime,
                    session,
                    &generation,
                    ctx,
                    (&again, &reason),
                    system.clone(),
                )
                .await;
            session.history.truncate(start);
            if let Some(thread) = native_thread(ctx) {
                session.native_thread = Some(thread);
            }
            let mut pass = pass?;
            self.attempt_output(session, ctx, attempt, &pass);
            pass.new_messages.splice(0..0, done);
            pass.iterations += outcome.iterations;
            pass.usage.add(outcome.usage);
            outcome = pass;
        }
        Ok(self.close_turn(session, selection, outcome))
    }

    /// Record a finished turn on its session: the runtime that ran it and
    /// its messages.
    fn close_turn(
        &self,
        session: &mut Session,
        selection: Selection,
        outcome: TurnOutcome,
    ) -> TurnOutcome {
        session.runtime = Some(selection.runtime.clone());
        session.selection = Some(selection);
        session.history.extend(
            outcome
                .new_messages
                .iter()
                .cloned()
                .map(SharedMessage::from),
        );
        outcome
    }

    async fn compact_session(
        &self,
        session: &mut Session,
        generation: &ModelRuntimeGeneration,
        ctx: &RunContext,
        trigger: &str,
    ) -> Result<bool, RunError> {
        let keep = self.config().agents.defaults.compaction.keep_recent_tokens;
        let model = self.model_client(generation, ctx);
        let hooks = CompactionHooks {
            runner: self.hooks(),
            session_id: Some(session.id.clone()),
        };
        match compact(
            &mut session.history,
            model.as_ref(),
            ctx,
            keep,
            trigger,
            &hooks,
        )
        .await
        {
            Ok(Some(record)) => {
                session.compactions.push(record);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(RunError::Model(e)),
        }
    }

    async fn run_on_runtime(
        &self,
        runtime: &str,
        session: &Session,
        generation: &ModelRuntimeGeneration,
        ctx: &RunContext,
        (user, prompt): (&UserInput, &str),
        system: Option<String>,
    ) -> Result<TurnOutcome, RunError> {
        if runtime == BUILTIN {
            return Ok(self
                .run_builtin(generation, ctx, &session.history, (user, prompt), system)
                .await?);
        }
        // Selection picks registered harnesses only.
        let Some(harness) = self.harnesses().get(runtime).cloned() else {
            return Err(RunError::Harness {
                harness: runtime.into(),
                error: clawhost_agent_core::HarnessError::Failed("not registered".into()),
            });
        };
        let max_iterations = self.config().agents.defaults.max_iterations;
        let turn = PreparedTurn {
            agent_id: session.agent_id.clone(),
            session_id: Some(session.id.clone()),
            model_ref: ctx.model_ref.clone(),
            system,
            history: session.history.clone(),
            user_text: prompt.into(),
            tools: clawhost_agent_core::ToolExecutor::specs(self.dispatcher().as_ref(), ctx),
            max_iterations,
            native_thread: session.native_thread.as_ref().map(|(id, _)| id.clone()),
        };
        let compaction = crate::compact::NativeCompactionHooks {
            hooks: self.hooks().clone(),
            ctx: ctx.clone(),
            history: session.history.clone(),
        };
        let mirror = Arc::new(
            TurnMirror::new(
                self.model_client(generation, ctx),
                self.dispatcher().clone(),
                ctx.clone(),
                (max_iterations, self.turn_budget()),
                &turn,
                user,
            )
            .with_compaction_observer(Arc::new(compaction))
            .with_tool_endpoints(Arc::new(clawhost_mcp_endpoint::McpToolEndpoints)),
        );
        let answer = harness.run_attempt(turn, mirror.clone()).await;
        // A harness stopped for calling past its budget ends on the budget.
        if let Some(reason) = mirror.budget_spent() {
            return Err(TurnError::ToolBudget(reason).into());
        }
        let answer = answer.map_err(|error| RunError::Harness {
            harness: runtime.into(),
            error,
        })?;
        Ok(mirror.finish(answer)?)
    }

    /// `session_start`: a session was created (`resumed: false`) or resumed.
    /// Observe-only: a failing handler is logged and cannot stop the session.
    pub async fn start_session(&self, session_id: &str, agent_id: &str, resumed: bool) {
        self.hooks()
            .observe(HookEvent::SessionStart(&SessionStartEvent {
                session_id: session_id.into(),
                agent_id: agent_id.into(),
                resumed,
            }))
            .await;
    }

    /// `session_end`: a session ended. Observe-only: a failing handler is
    /// logged and cannot keep the session going. The session's `allow-always`
    /// approvals end with it, and the hooks it fired without waiting
    /// (`llm_input`, `llm_output`) are let finish.
    pub async fn end_session(
        &self,
        session_id: &str,
        agent_id: &str,
        reason: clawhost_hooks::SessionEndReason,
    ) {
        self.dispatcher().forget_approvals(session_id);
        self.hooks().settle().await;
        self.hooks()
            .observe(HookEvent::SessionEnd(&SessionEndEvent {
                session_id: session_id.into(),
                agent_id: agent_id.into(),
                reason,
            }))
            .await;
    }

    /// `/reset`: `before_reset` (observe), then clear the session, tell its
    /// harness, and let the next turn select a runtime afresh.
    pub async fn reset_session(&self, session: &mut Session) {
        self.hooks()
            .observe(HookEvent::BeforeReset(&clawhost_hooks::BeforeResetEvent {
                session_id: session.id.clone(),
                agent_id: session.agent_id.clone(),
                message_count: session.history.len() as u32,
            }))
            .await;
        if let Some(h) = session
            .runtime
            .as_deref()
            .and_then(|r| self.harnesses().get(r))
        {
            h.reset(&session.id).await;
        }
        session.history.clear();
        session.runtime = None;
        session.selection = None;
        session.recorded_reason = None;
        session.native_thread = None;
    }

    /// Status lines: the model ref, and separately the runtime, how it
    /// executes, and why it was selected.
    pub fn status(&self, session: &Session, generation: &ModelRuntimeGeneration) -> Vec<String> {
        // Once a session has run, its runtime is pinned: no hot switch.
        let runtime = match session.runtime.as_deref() {
            Some(id) => format!("{id} (pinned by this session; /reset or /new selects again)"),
            None => "(not selected yet)".into(),
        };
        let execution = match session.runtime.as_deref() {
            None => "-".to_string(),
            Some(BUILTIN) => "host loop (built-in)".to_string(),
            Some(id) => self
                .harnesses()
                .get(id)
                .map(|h| h.execution())
                .unwrap_or_else(|| "not registered".into()),
        };
        let mut lines = vec![
            format!("Session: {}", session.id),
            format!("Agent: {}", session.agent_id),
            format!("Model: {}", generation.model),
            format!("Generation: {}", generation.number),
            format!("Runtime: {runtime}"),
            format!("Execution: {execution}"),
        ];
        match (&session.selection, &session.recorded_reason) {
            (Some(s), _) => lines.push(format!("Selection: {} ({})", s.reason.as_str(), s.detail)),
            (None, Some(reason)) => {
                lines.push(format!("Selection: {reason} (recorded on the session)"))
            }
            (None, None) => {}
        }
        if let Some((thread, agent)) = &session.native_thread {
            lines.push(format!("Native runtime: {agent} (thread {thread})"));
        }
        lines.push(format!("Messages: {}", session.history.len()));
        lines
    }
}

/// The thread a native runtime last reported in this run, with its name.
fn native_thread(ctx: &RunContext) -> Option<(String, String)> {
    ctx.events.find_last(|e| match e {
        TurnEvent::NativeThread { thread, agent } => Some((thread.clone(), agent.clone())),
        _ => None,
    })
}

fn is_overflow(e: &RunError) -> bool {
    match e {
        RunError::Turn(TurnError::Model(m))
        | RunError::Model(m)
        | RunError::Harness {
            error: clawhost_agent_core::HarnessError::Model(m),
            ..
        } => m.kind == ModelErrorKind::ContextOverflow,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use clawhost_agent_core::{HarnessError, ModelError};

    use super::*;

    #[test]
    fn a_harness_overflow_is_recognised_by_its_kind_never_by_its_text() {
        let harness = |error| RunError::Harness {
            harness: "plan-act".into(),
            error,
        };
        let overflow = ModelError::new(ModelErrorKind::ContextOverflow, "too long");
        assert!(is_overflow(&harness(HarnessError::Model(overflow))));
        // Text that merely looks like an overflow is not one.
        let lookalike = HarnessError::Failed("ContextOverflow: too long".into());
        assert!(!is_overflow(&harness(lookalike)));
        let other = ModelError::new(ModelErrorKind::RateLimited, "ContextOverflow: no");
        assert!(!is_overflow(&harness(HarnessError::Model(other))));
    }
}
