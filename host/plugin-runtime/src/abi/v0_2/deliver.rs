//! Delivering a hook event to the 0.2 family that handles it.

use clawhost_hooks::{ApprovalResolvedEvent, HookEvent, HookOutcome};
use wasmtime::Store;

use super::{convert, hooks, missing, prepare_hooks, turn_hooks, Guest};
use crate::abi::outgoing::Outgoing;
use crate::abi::{Answer, Reply};
use crate::state::PluginState;

impl Guest {
    /// Whether `before-tool-call` goes to `tool-gate` (0.2.1): it does
    /// whenever the component exports that family.
    fn gates(&self) -> bool {
        self.tool_gate.is_some()
    }

    /// The `turn-hooks` export (0.2.2).
    fn turn_hooks(&self) -> wasmtime::Result<&super::ex::turn_hooks::Guest> {
        self.turn_hooks
            .as_ref()
            .ok_or_else(|| missing("turn-hooks"))
    }

    /// The `prepare-hooks` export (0.2.3).
    fn prepare_hooks(&self) -> wasmtime::Result<&super::ex::prepare_hooks::Guest> {
        self.prepare_hooks
            .as_ref()
            .ok_or_else(|| missing("prepare-hooks"))
    }

    /// Deliver a hook event to the family that handles it.
    pub(super) async fn hook(
        &self,
        store: &mut Store<PluginState>,
        event: HookEvent<'_>,
    ) -> wasmtime::Result<Reply> {
        use HookEvent as E;
        let observed = |outcome| Reply::new(Answer::Hook(Ok(outcome)), 0);
        Ok(match event {
            // A plugin that gates calls through `tool-gate` (0.2.1) gets
            // `before-tool-call` there, with approvals.
            E::BeforeToolCall(e) if self.gates() => {
                let f = self
                    .tool_gate
                    .as_ref()
                    .ok_or_else(|| missing("tool-gate"))?;
                let o = f
                    .call_before_tool_call(&mut *store, hooks::before_tool_call(e))
                    .await?;
                let size = hooks::gate_outcome_len(&o);
                Reply::new(Answer::Hook(hooks::gate_outcome(o)), size)
            }
            E::ToolResultPersist(e) => {
                let f = self
                    .persist_hooks
                    .as_ref()
                    .ok_or_else(|| missing("persist-hooks"))?;
                let o = f
                    .call_tool_result_persist(&mut *store, hooks::tool_result_persist(e))
                    .await?;
                let size = hooks::persist_outcome_len(&o);
                Reply::new(Answer::Hook(Ok(hooks::persist_outcome(o))), size)
            }
            E::BeforeMessageWrite(e) => {
                let f = self
                    .persist_hooks
                    .as_ref()
                    .ok_or_else(|| missing("persist-hooks"))?;
                let staged = Outgoing::new([&e.message]);
                let requests = convert::requests(&staged);
                let message = convert::messages(&staged, &requests).remove(0);
                let o = f
                    .call_before_message_write(&mut *store, hooks::message_write(e, message))
                    .await?;
                let size = hooks::message_write_len(&o);
                Reply::new(Answer::Hook(hooks::message_write_outcome(o)), size)
            }
            E::BeforeToolCall(e) => {
                let f = self
                    .tool_hooks
                    .as_ref()
                    .ok_or_else(|| missing("tool-hooks"))?;
                let o = f
                    .call_before_tool_call(&mut *store, hooks::before_tool_call(e))
                    .await?;
                let size = hooks::before_tool_call_len(&o);
                Reply::new(Answer::Hook(hooks::before_tool_call_outcome(o)), size)
            }
            E::AfterToolCall(e) => {
                let f = self
                    .tool_hooks
                    .as_ref()
                    .ok_or_else(|| missing("tool-hooks"))?;
                f.call_after_tool_call(&mut *store, hooks::after_tool_call(e))
                    .await?;
                observed(HookOutcome::AfterToolCall(()))
            }
            E::ToolResult(e) => {
                let f = self
                    .tool_hooks
                    .as_ref()
                    .ok_or_else(|| missing("tool-hooks"))?;
                let o = f
                    .call_tool_result(&mut *store, hooks::after_tool_call(e))
                    .await?;
                let size = hooks::tool_result_len(&o);
                Reply::new(Answer::Hook(hooks::tool_result_outcome(o)), size)
            }
            E::BeforePromptBuild(e) => {
                let f = self
                    .prompt_hooks
                    .as_ref()
                    .ok_or_else(|| missing("prompt-hooks"))?;
                let o = f
                    .call_before_prompt_build(&mut *store, hooks::before_prompt_build(e))
                    .await?;
                let size = hooks::before_prompt_build_len(&o);
                Reply::new(
                    Answer::Hook(Ok(hooks::before_prompt_build_outcome(o))),
                    size,
                )
            }
            E::LlmInput(e) if self.run_hooks.is_some() => {
                let f = self
                    .run_hooks
                    .as_ref()
                    .ok_or_else(|| missing("run-hooks"))?;
                let history = Outgoing::new(e.history.iter().map(|m| &**m));
                let requests = convert::requests(&history);
                let messages = convert::messages(&history, &requests);
                let tools: Vec<&str> = e.tools.iter().map(String::as_str).collect();
                f.call_llm_input(&mut *store, hooks::run_llm_input(e, &messages, &tools))
                    .await?;
                observed(HookOutcome::LlmInput(()))
            }
            E::LlmOutput(e) if self.run_hooks.is_some() => {
                let f = self
                    .run_hooks
                    .as_ref()
                    .ok_or_else(|| missing("run-hooks"))?;
                let texts: Vec<&str> = e.texts.iter().map(String::as_str).collect();
                f.call_llm_output(&mut *store, hooks::run_llm_output(e, &texts))
                    .await?;
                observed(HookOutcome::LlmOutput(()))
            }
            E::BeforeModelResolve(e) => {
                let f = self
                    .run_hooks
                    .as_ref()
                    .ok_or_else(|| missing("run-hooks"))?;
                let o = f
                    .call_before_model_resolve(&mut *store, hooks::model_resolve(e))
                    .await?;
                let size = hooks::model_resolve_len(&o);
                Reply::new(Answer::Hook(Ok(hooks::model_resolve_outcome(o))), size)
            }
            E::BeforeAgentStart(e) => {
                let f = self
                    .run_hooks
                    .as_ref()
                    .ok_or_else(|| missing("run-hooks"))?;
                let o = f
                    .call_before_agent_start(&mut *store, hooks::agent_start(e))
                    .await?;
                let size = hooks::agent_start_len(&o);
                Reply::new(Answer::Hook(Ok(hooks::agent_start_outcome(o))), size)
            }
            E::BeforeAgentRun(e) => {
                let f = self.turn_hooks()?;
                let o = f
                    .call_before_agent_run(&mut *store, turn_hooks::turn_event(e))
                    .await?;
                let (outcome, size) = turn_hooks::run_outcome(o);
                Reply::new(Answer::Hook(Ok(outcome)), size)
            }
            E::BeforeAgentReply(e) => {
                let f = self.turn_hooks()?;
                let o = f
                    .call_before_agent_reply(&mut *store, turn_hooks::turn_event(e))
                    .await?;
                let (outcome, size) = turn_hooks::reply_outcome(o);
                Reply::new(Answer::Hook(Ok(outcome)), size)
            }
            E::BeforeAgentFinalize(e) => {
                let f = self.turn_hooks()?;
                let o = f
                    .call_before_agent_finalize(&mut *store, turn_hooks::finalize_event(e))
                    .await?;
                let (outcome, size) = turn_hooks::finalize_outcome(o);
                Reply::new(Answer::Hook(Ok(outcome)), size)
            }
            E::AgentTurnPrepare(e) => {
                let f = self.prepare_hooks()?;
                let o = f
                    .call_agent_turn_prepare(&mut *store, prepare_hooks::turn_event(e))
                    .await?;
                let (outcome, size) = prepare_hooks::prepare_outcome(o);
                Reply::new(Answer::Hook(Ok(outcome)), size)
            }
            E::ResolveExecEnv(e) => {
                let f = self.prepare_hooks()?;
                let o = f
                    .call_resolve_exec_env(&mut *store, prepare_hooks::exec_event(e))
                    .await?;
                let (outcome, size) = prepare_hooks::exec_env_outcome(o);
                Reply::new(Answer::Hook(Ok(outcome)), size)
            }
            E::ModelCallStarted(e) => {
                let f = self
                    .run_hooks
                    .as_ref()
                    .ok_or_else(|| missing("run-hooks"))?;
                f.call_model_call_started(&mut *store, hooks::model_call(e))
                    .await?;
                observed(HookOutcome::ModelCallStarted(()))
            }
            E::ModelCallEnded(e) => {
                let f = self
                    .run_hooks
                    .as_ref()
                    .ok_or_else(|| missing("run-hooks"))?;
                f.call_model_call_ended(&mut *store, hooks::model_call_ended(e))
                    .await?;
                observed(HookOutcome::ModelCallEnded(()))
            }
            E::CompactionProvider(e) => {
                let f = self
                    .compaction_provider
                    .as_ref()
                    .ok_or_else(|| missing("compaction-provider"))?;
                let o = f
                    .call_summarize(&mut *store, hooks::before_compaction(e))
                    .await?;
                let size = o.as_ref().map_or(0, String::len);
                Reply::new(Answer::Hook(Ok(HookOutcome::CompactionProvider(o))), size)
            }
            E::LlmInput(e) => {
                let f = self
                    .model_hooks
                    .as_ref()
                    .ok_or_else(|| missing("model-hooks"))?;
                f.call_llm_input(&mut *store, hooks::llm_input(e)).await?;
                observed(HookOutcome::LlmInput(()))
            }
            E::LlmOutput(e) => {
                let f = self
                    .model_hooks
                    .as_ref()
                    .ok_or_else(|| missing("model-hooks"))?;
                let text = e.text();
                f.call_llm_output(&mut *store, hooks::llm_output(e, &text))
                    .await?;
                observed(HookOutcome::LlmOutput(()))
            }
            E::SessionStart(e) => {
                let f = self
                    .session_hooks
                    .as_ref()
                    .ok_or_else(|| missing("session-hooks"))?;
                f.call_session_start(&mut *store, hooks::session_start(e))
                    .await?;
                observed(HookOutcome::SessionStart(()))
            }
            E::SessionEnd(e) => {
                let f = self
                    .session_hooks
                    .as_ref()
                    .ok_or_else(|| missing("session-hooks"))?;
                f.call_session_end(&mut *store, hooks::session_end(e))
                    .await?;
                observed(HookOutcome::SessionEnd(()))
            }
            E::BeforeReset(e) => {
                let f = self
                    .session_hooks
                    .as_ref()
                    .ok_or_else(|| missing("session-hooks"))?;
                f.call_before_reset(&mut *store, hooks::before_reset(e))
                    .await?;
                observed(HookOutcome::BeforeReset(()))
            }
            E::AgentEnd(e) => {
                let f = self
                    .session_hooks
                    .as_ref()
                    .ok_or_else(|| missing("session-hooks"))?;
                f.call_agent_end(&mut *store, hooks::agent_end(e)).await?;
                observed(HookOutcome::AgentEnd(()))
            }
            E::BeforeCompaction(e) => {
                let f = self
                    .transcript_hooks
                    .as_ref()
                    .ok_or_else(|| missing("transcript-hooks"))?;
                // Observe-only now: a summary a 0.2.0 plugin returns here is
                // not used (summaries come from `compaction-provider`).
                let o = f
                    .call_before_compaction(&mut *store, hooks::before_compaction(e))
                    .await?;
                Reply::new(
                    Answer::Hook(Ok(HookOutcome::BeforeCompaction(()))),
                    hooks::before_compaction_len(&o),
                )
            }
            E::AfterCompaction(e) => {
                let f = self
                    .transcript_hooks
                    .as_ref()
                    .ok_or_else(|| missing("transcript-hooks"))?;
                f.call_after_compaction(&mut *store, hooks::after_compaction(e))
                    .await?;
                observed(HookOutcome::AfterCompaction(()))
            }
        })
    }

    /// Tell a `tool-gate` plugin how its approval request was answered.
    pub(super) async fn approval_resolved(
        &self,
        store: &mut Store<PluginState>,
        event: &ApprovalResolvedEvent,
    ) -> wasmtime::Result<Reply> {
        let f = self
            .tool_gate
            .as_ref()
            .ok_or_else(|| missing("tool-gate"))?;
        f.call_approval_resolved(&mut *store, hooks::approval_resolution(event))
            .await?;
        Ok(Reply::new(Answer::Done, 0))
    }
}
