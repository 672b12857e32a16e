"""The component's exports: every interface of the ``plugin`` world,
delegating to what the plugin module registered. Used only inside a
component (``clawhost-py build`` makes the entry module import this)."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, List, Optional

from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.exports import (
    model_hooks,
    persist_hooks,
    prepare_hooks,
    prompt_hooks,
    run_hooks,
    session_hooks,
    tool_gate,
    tool_hooks,
    tool_provider,
    transcript_hooks,
    turn_hooks,
)
from wit_world.imports import types

from ._host import log
from ._registry import (
    _UNPARSED,
    REGISTRY,
    Allow,
    Block,
    CompactionEvent,
    ExecEvent,
    Finalize,
    FinalizeEvent,
    Handler,
    Keep,
    KeepOut,
    MessageEvent,
    ModelEvent,
    ModelOverride,
    Observed,
    PersistEvent,
    StartEvent,
    PromptEdit,
    PromptEvent,
    Replace,
    RequireApproval,
    Revise,
    Rewrite,
    ToolCallEvent,
    ToolError,
    ToolResultEvent,
    TurnEvent,
)


def _plain(value: Any) -> Any:
    """Bindings' dataclasses and enums as plain data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name.lower().replace("_", "-")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _observe(hook: str, event: Any) -> None:
    handler = REGISTRY.handler(hook)
    if handler is None:
        return
    try:
        handler.func(Observed(hook, _plain(event)))
    except Exception as e:  # an observer's error is logged, nothing more
        log("warn", f"{hook} observer raised {type(e).__name__}: {e}")


def _subscribed(hooks: dict[str, Any]) -> List[tuple[Handler, Any]]:
    return [(h, hooks[h.hook]) for h in REGISTRY.handlers if h.hook in hooks]


class ToolProvider(exports.ToolProvider):
    def tools(self) -> List[types.ToolSpec]:
        return [
            types.ToolSpec(t.name, t.description, json.dumps(t.parameters))
            for t in REGISTRY.tools.values()
        ]

    def call(self, call: tool_provider.ToolCall) -> str:
        found = REGISTRY.tools.get(call.tool)
        if found is None:
            raise Err(types.ToolError_Failed(f"no tool `{call.tool}` in this plugin"))
        try:
            return found.call(call.params)
        except ToolError as e:
            if e.invalid:
                raise Err(types.ToolError_InvalidParams(str(e)))
            raise Err(types.ToolError_Failed(str(e)))


def _call_event(e: tool_hooks.BeforeToolCallEvent) -> ToolCallEvent:
    c = e.context
    event = ToolCallEvent(
        e.tool, e.call_id, _UNPARSED, e.tool_plugin, c.agent_id, c.session_id, c.model_ref
    )
    event._params_text = e.params
    return event


def _result_event(e: tool_hooks.AfterToolCallEvent) -> ToolResultEvent:
    c = e.context
    failed = isinstance(e.outcome, Err)
    event = ToolResultEvent(
        e.tool,
        e.call_id,
        _UNPARSED,
        None if failed else _UNPARSED,
        str(e.outcome.value) if failed else None,
        e.duration_ms,
        c.agent_id,
        c.session_id,
        c.model_ref,
    )
    event._params_text = e.params
    if not failed:
        event._result_text = e.outcome.value
    return event


def _gate(e: tool_hooks.BeforeToolCallEvent) -> tool_gate.GateOutcome:
    handler = REGISTRY.handler("before_tool_call")
    if handler is None:
        return tool_gate.GateOutcome_Allow()
    try:
        decision = handler.func(_call_event(e))
    except Exception as err:  # fail closed, without a trap
        return tool_gate.GateOutcome_Block(
            f"before_tool_call raised {type(err).__name__}: {err}"
        )
    if decision is None or isinstance(decision, Allow):
        return tool_gate.GateOutcome_Allow()
    if isinstance(decision, Block):
        return tool_gate.GateOutcome_Block(decision.reason)
    if isinstance(decision, Rewrite):
        return tool_gate.GateOutcome_Rewrite(json.dumps(decision.params))
    if isinstance(decision, RequireApproval):
        return tool_gate.GateOutcome_RequireApproval(
            tool_gate.ApprovalRequest(
                decision.title,
                decision.description,
                tool_gate.ApprovalSeverity[decision.severity.upper()],
                decision.timeout_ms,
                tool_gate.TimeoutBehavior[decision.timeout_behavior.upper()],
            )
        )
    return tool_gate.GateOutcome_Block(f"before_tool_call returned {decision!r}, not a decision")


class ToolGate(exports.ToolGate):
    def subscription(self) -> Optional[tool_gate.GateSubscription]:
        handler = REGISTRY.handler("before_tool_call")
        if handler is None:
            return None
        return tool_gate.GateSubscription(handler.priority, handler.tools)

    def before_tool_call(self, event: tool_hooks.BeforeToolCallEvent) -> tool_gate.GateOutcome:
        return _gate(event)

    def approval_resolved(self, event: tool_gate.ApprovalResolution) -> None:
        log("info", f"approval of {event.tool} ({event.call_id}): {_plain(event.decision)}")


class ToolHooks(exports.ToolHooks):
    def subscriptions(self) -> List[tool_hooks.Subscription]:
        kinds = {
            "after_tool_call": tool_hooks.ToolHook.AFTER_TOOL_CALL,
            "tool_result": tool_hooks.ToolHook.TOOL_RESULT,
        }
        return [tool_hooks.Subscription(k, h.priority, h.tools) for h, k in _subscribed(kinds)]

    def before_tool_call(
        self, event: tool_hooks.BeforeToolCallEvent
    ) -> tool_hooks.BeforeToolCallOutcome:
        # Not subscribed here: `tool-gate` carries before_tool_call.
        return tool_hooks.BeforeToolCallOutcome_Allow()

    def after_tool_call(self, event: tool_hooks.AfterToolCallEvent) -> None:
        handler = REGISTRY.handler("after_tool_call")
        if handler is None:
            return
        try:
            handler.func(_result_event(event))
        except Exception as e:
            log("warn", f"after_tool_call observer raised {type(e).__name__}: {e}")

    def tool_result(self, event: tool_hooks.AfterToolCallEvent) -> tool_hooks.ToolResultOutcome:
        handler = REGISTRY.handler("tool_result")
        if handler is None:
            return tool_hooks.ToolResultOutcome_Keep()
        try:
            decision = handler.func(_result_event(event))
        except Exception as e:  # fail closed: withhold what may need redacting
            return tool_hooks.ToolResultOutcome_Replace(
                Err(f"result withheld: tool_result raised {type(e).__name__}: {e}")
            )
        if decision is None or isinstance(decision, Keep):
            return tool_hooks.ToolResultOutcome_Keep()
        if isinstance(decision, Replace):
            if decision.error is not None:
                return tool_hooks.ToolResultOutcome_Replace(Err(decision.error))
            return tool_hooks.ToolResultOutcome_Replace(Ok(json.dumps(decision.result)))
        return tool_hooks.ToolResultOutcome_Keep()


class PromptHooks(exports.PromptHooks):
    def subscriptions(self) -> List[prompt_hooks.Subscription]:
        kinds = {"before_prompt_build": prompt_hooks.PromptHook.BEFORE_PROMPT_BUILD}
        return [prompt_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def before_prompt_build(
        self, event: prompt_hooks.BeforePromptBuildEvent
    ) -> prompt_hooks.BeforePromptBuildOutcome:
        handler = REGISTRY.handler("before_prompt_build")
        if handler is None:
            return prompt_hooks.BeforePromptBuildOutcome_Keep()
        try:
            edit = handler.func(
                PromptEvent(event.session_id, event.agent_id, event.system, event.prompt)
            )
        except Exception as e:
            log("warn", f"before_prompt_build raised {type(e).__name__}: {e}")
            return prompt_hooks.BeforePromptBuildOutcome_Keep()
        if not isinstance(edit, PromptEdit):
            return prompt_hooks.BeforePromptBuildOutcome_Keep()
        return prompt_hooks.BeforePromptBuildOutcome_Edit(
            prompt_hooks.PromptEdit(
                edit.prepend_context,
                edit.append_context,
                edit.system_prompt,
                edit.prepend_system_context,
                edit.append_system_context,
            )
        )


class ModelHooks(exports.ModelHooks):
    """The 0.2.0 summary forms: never subscribed (``run-hooks`` has them in full)."""

    def subscriptions(self) -> List[model_hooks.Subscription]:
        return []

    def llm_input(self, event: model_hooks.LlmInputEvent) -> None:
        pass

    def llm_output(self, event: model_hooks.LlmOutputEvent) -> None:
        pass


class SessionHooks(exports.SessionHooks):
    def subscriptions(self) -> List[session_hooks.Subscription]:
        kinds = {
            "session_start": session_hooks.SessionHook.SESSION_START,
            "session_end": session_hooks.SessionHook.SESSION_END,
            "agent_end": session_hooks.SessionHook.AGENT_END,
            "before_reset": session_hooks.SessionHook.BEFORE_RESET,
        }
        return [session_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def session_start(self, event: session_hooks.SessionStartEvent) -> None:
        _observe("session_start", event)

    def session_end(self, event: session_hooks.SessionEndEvent) -> None:
        _observe("session_end", event)

    def agent_end(self, event: session_hooks.AgentEndEvent) -> None:
        _observe("agent_end", event)

    def before_reset(self, event: session_hooks.BeforeResetEvent) -> None:
        _observe("before_reset", event)


class TranscriptHooks(exports.TranscriptHooks):
    def subscriptions(self) -> List[transcript_hooks.Subscription]:
        kinds = {
            "before_compaction": transcript_hooks.TranscriptHook.BEFORE_COMPACTION,
            "after_compaction": transcript_hooks.TranscriptHook.AFTER_COMPACTION,
        }
        return [transcript_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def before_compaction(
        self, event: transcript_hooks.BeforeCompactionEvent
    ) -> transcript_hooks.BeforeCompactionOutcome:
        _observe("before_compaction", event)
        return transcript_hooks.BeforeCompactionOutcome_Proceed()

    def after_compaction(self, event: transcript_hooks.AfterCompactionEvent) -> None:
        _observe("after_compaction", event)


class RunHooks(exports.RunHooks):
    def subscriptions(self) -> List[run_hooks.Subscription]:
        kinds = {
            "before_model_resolve": run_hooks.RunHook.BEFORE_MODEL_RESOLVE,
            "before_agent_start": run_hooks.RunHook.BEFORE_AGENT_START,
            "llm_input": run_hooks.RunHook.LLM_INPUT,
            "llm_output": run_hooks.RunHook.LLM_OUTPUT,
            "model_call_started": run_hooks.RunHook.MODEL_CALL_STARTED,
            "model_call_ended": run_hooks.RunHook.MODEL_CALL_ENDED,
        }
        return [run_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def before_model_resolve(
        self, event: run_hooks.ModelResolveEvent
    ) -> run_hooks.ModelResolveOutcome:
        handler = REGISTRY.handler("before_model_resolve")
        if handler is None:
            return run_hooks.ModelResolveOutcome_Keep()
        try:
            choice = handler.func(
                ModelEvent(
                    event.session_id, event.agent_id, event.prompt, event.provider, event.model
                )
            )
        except Exception as e:
            log("warn", f"before_model_resolve raised {type(e).__name__}: {e}")
            return run_hooks.ModelResolveOutcome_Keep()
        if not isinstance(choice, ModelOverride):
            return run_hooks.ModelResolveOutcome_Keep()
        return run_hooks.ModelResolveOutcome_Override(
            run_hooks.ModelOverride(choice.provider, choice.model)
        )

    def before_agent_start(self, event: run_hooks.AgentStartEvent) -> run_hooks.AgentStartOutcome:
        handler = REGISTRY.handler("before_agent_start")
        if handler is None:
            return run_hooks.AgentStartOutcome_Allow()
        try:
            decision = handler.func(
                StartEvent(
                    event.run_id, event.session_id, event.agent_id, event.model_ref, event.prompt
                )
            )
        except Exception as e:
            log("warn", f"before_agent_start raised {type(e).__name__}: {e}")
            return run_hooks.AgentStartOutcome_Allow()
        if isinstance(decision, Block):
            return run_hooks.AgentStartOutcome_Block(decision.reason)
        return run_hooks.AgentStartOutcome_Allow()

    def llm_input(self, event: run_hooks.LlmInputEvent) -> None:
        _observe("llm_input", event)

    def llm_output(self, event: run_hooks.LlmOutputEvent) -> None:
        _observe("llm_output", event)

    def model_call_started(self, event: run_hooks.ModelCall) -> None:
        _observe("model_call_started", event)

    def model_call_ended(self, event: run_hooks.ModelCallEndedEvent) -> None:
        _observe("model_call_ended", event)


def _message_text(message: types.Message) -> tuple[str, str]:
    if isinstance(message, types.Message_User):
        return "user", message.value
    if isinstance(message, types.Message_Assistant):
        return "assistant", message.value.text
    return "tool_result", message.value.content


def _with_text(message: types.Message, text: str) -> types.Message:
    """The same message (kind, call ids) with another text."""
    if isinstance(message, types.Message_User):
        return types.Message_User(text)
    if isinstance(message, types.Message_Assistant):
        return types.Message_Assistant(
            types.AssistantMessage(text, message.value.tool_calls)
        )
    r = message.value
    return types.Message_ToolResult(
        types.ToolResultMessage(r.call_id, r.tool, text, r.is_error)
    )


class PersistHooks(exports.PersistHooks):
    def subscriptions(self) -> List[persist_hooks.Subscription]:
        kinds = {
            "tool_result_persist": persist_hooks.PersistHook.TOOL_RESULT_PERSIST,
            "before_message_write": persist_hooks.PersistHook.BEFORE_MESSAGE_WRITE,
        }
        return [persist_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def tool_result_persist(
        self, event: persist_hooks.ToolResultPersistEvent
    ) -> persist_hooks.ToolResultPersistOutcome:
        handler = REGISTRY.handler("tool_result_persist")
        if handler is None:
            return persist_hooks.ToolResultPersistOutcome_Keep()
        c = event.context
        try:
            text = handler.func(
                PersistEvent(
                    event.tool,
                    event.call_id,
                    event.content,
                    event.is_error,
                    c.agent_id,
                    c.session_id,
                    c.model_ref,
                )
            )
        except Exception as e:  # fail closed: it may have been a redaction
            return persist_hooks.ToolResultPersistOutcome_Replace(
                f"[withheld from the transcript: tool_result_persist raised {type(e).__name__}]"
            )
        if isinstance(text, str):
            return persist_hooks.ToolResultPersistOutcome_Replace(text)
        return persist_hooks.ToolResultPersistOutcome_Keep()

    def before_message_write(
        self, event: persist_hooks.MessageWriteEvent
    ) -> persist_hooks.MessageWriteOutcome:
        handler = REGISTRY.handler("before_message_write")
        if handler is None:
            return persist_hooks.MessageWriteOutcome_Keep()
        role, text = _message_text(event.message)
        try:
            decision = handler.func(MessageEvent(event.session_id, event.agent_id, role, text))
        except Exception as e:
            log("warn", f"before_message_write raised {type(e).__name__}: {e}")
            return persist_hooks.MessageWriteOutcome_Keep()
        if isinstance(decision, KeepOut):
            return persist_hooks.MessageWriteOutcome_Block(decision.reason)
        if isinstance(decision, str):
            return persist_hooks.MessageWriteOutcome_Replace(_with_text(event.message, decision))
        return persist_hooks.MessageWriteOutcome_Keep()


class CompactionProvider(exports.CompactionProvider):
    def offer(self) -> Optional[int]:
        handler = REGISTRY.handler("compaction_provider")
        return None if handler is None else handler.priority

    def summarize(self, event: transcript_hooks.BeforeCompactionEvent) -> Optional[str]:
        handler = REGISTRY.handler("compaction_provider")
        if handler is None:
            return None
        try:
            summary = handler.func(
                CompactionEvent(
                    event.session_id,
                    event.message_count,
                    event.token_count,
                    event.compacted_count,
                    event.transcript,
                )
            )
        except Exception as e:
            log("warn", f"compaction provider raised {type(e).__name__}: {e}")
            return None
        return summary if isinstance(summary, str) else None


def _turn(e: turn_hooks.TurnEvent) -> TurnEvent:
    return TurnEvent(e.session_id, e.agent_id, e.runtime, e.model_ref, e.prompt)


class TurnHooks(exports.TurnHooks):
    def subscriptions(self) -> List[turn_hooks.Subscription]:
        kinds = {
            "before_agent_run": turn_hooks.TurnHook.BEFORE_AGENT_RUN,
            "before_agent_reply": turn_hooks.TurnHook.BEFORE_AGENT_REPLY,
            "before_agent_finalize": turn_hooks.TurnHook.BEFORE_AGENT_FINALIZE,
        }
        return [turn_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def before_agent_run(self, event: turn_hooks.TurnEvent) -> turn_hooks.RunOutcome:
        handler = REGISTRY.handler("before_agent_run")
        if handler is None:
            return turn_hooks.RunOutcome_Allow()
        # What it raises reaches the host as a failure (fail closed by default).
        decision = handler.func(_turn(event))
        if isinstance(decision, Block):
            return turn_hooks.RunOutcome_Block(decision.reason)
        return turn_hooks.RunOutcome_Allow()

    def before_agent_reply(self, event: turn_hooks.TurnEvent) -> turn_hooks.ReplyOutcome:
        handler = REGISTRY.handler("before_agent_reply")
        if handler is None:
            return turn_hooks.ReplyOutcome_Pass()
        try:
            reply = handler.func(_turn(event))
        except Exception as e:
            log("warn", f"before_agent_reply raised {type(e).__name__}: {e}")
            return turn_hooks.ReplyOutcome_Pass()
        if isinstance(reply, str):
            return turn_hooks.ReplyOutcome_Reply(reply)
        return turn_hooks.ReplyOutcome_Pass()

    def before_agent_finalize(
        self, event: turn_hooks.FinalizeEvent
    ) -> turn_hooks.FinalizeOutcome:
        handler = REGISTRY.handler("before_agent_finalize")
        if handler is None:
            return turn_hooks.FinalizeOutcome_Proceed()
        try:
            decision = handler.func(
                FinalizeEvent(_turn(event.turn), event.answer, event.revisions)
            )
        except Exception as e:
            log("warn", f"before_agent_finalize raised {type(e).__name__}: {e}")
            return turn_hooks.FinalizeOutcome_Proceed()
        if isinstance(decision, Revise):
            return turn_hooks.FinalizeOutcome_Revise(decision.reason)
        if isinstance(decision, Finalize):
            return turn_hooks.FinalizeOutcome_Finalize()
        return turn_hooks.FinalizeOutcome_Proceed()


class PrepareHooks(exports.PrepareHooks):
    def subscriptions(self) -> List[prepare_hooks.Subscription]:
        kinds = {
            "agent_turn_prepare": prepare_hooks.PrepareHook.AGENT_TURN_PREPARE,
            "resolve_exec_env": prepare_hooks.PrepareHook.RESOLVE_EXEC_ENV,
        }
        return [prepare_hooks.Subscription(k, h.priority) for h, k in _subscribed(kinds)]

    def agent_turn_prepare(
        self, event: prepare_hooks.TurnEvent
    ) -> Optional[prepare_hooks.TurnContext]:
        handler = REGISTRY.handler("agent_turn_prepare")
        if handler is None:
            return None
        try:
            edit = handler.func(
                TurnEvent(
                    event.session_id,
                    event.agent_id,
                    event.runtime,
                    event.model_ref,
                    event.prompt,
                )
            )
        except Exception as e:
            log("warn", f"agent_turn_prepare raised {type(e).__name__}: {e}")
            return None
        if not isinstance(edit, PromptEdit):
            return None
        return prepare_hooks.TurnContext(edit.prepend_context, edit.append_context)

    def resolve_exec_env(self, event: prepare_hooks.ExecEvent) -> List[prepare_hooks.EnvVar]:
        handler = REGISTRY.handler("resolve_exec_env")
        if handler is None:
            return []
        c = event.context
        # What it raises reaches the host as a failure (the operator's fail
        # policy decides whether the command runs without its variables).
        env = handler.func(
            ExecEvent(event.command, event.cwd, event.call_id, c.agent_id, c.session_id, c.model_ref)
        )
        if not isinstance(env, dict):
            return []
        return [prepare_hooks.EnvVar(str(k), str(v)) for k, v in env.items()]
