"""Example Python plugin: a tool and a hook.

- tool ``py_word_stats``: counts words and distinct words of a text.
- ``before_tool_call``: blocks calls whose parameters mention a word from
  the config's ``blockWords``; asks for approval of ``shout``-style tools
  listed in ``approveTools``.
- observes ``after_tool_call`` into the log.
- ``tool_result_persist``: words in ``hideInTranscript`` are stored as
  ``[hidden]`` (the model saw them).
- ``before_agent_start``: a message containing ``stopWord`` does not run.
- ``before_agent_reply``: a message in ``cannedReplies`` is answered without
  the runtime; ``before_agent_finalize``: an answer without ``mustMention``
  goes back for one more pass.
- ``agent_turn_prepare``: ``turnContext`` goes after the user's message as
  ``[<runtime>] <it>``; ``resolve_exec_env``: ``execEnv`` (``{"NAME":
  "value"}``) is set for the host's ``exec`` commands (``{command}`` in a
  value is the command).
"""

from typing import Any

from clawhost_sdk import (
    ExecEvent,
    FinalizeEvent,
    Observed,
    PersistEvent,
    PromptEdit,
    StartEvent,
    ToolCallEvent,
    ToolError,
    ToolResultEvent,
    TurnEvent,
    Revise,
    agent_turn_prepare,
    allow,
    before_agent_finalize,
    before_agent_reply,
    before_agent_start,
    before_tool_call,
    block,
    config,
    log,
    observe,
    require_approval,
    resolve_exec_env,
    tool,
    tool_result_persist,
)


@tool(description="Counts the words and the distinct words of a text.")
def py_word_stats(text: str, lowercase: bool = True) -> dict[str, Any]:
    if not text.strip():
        raise ToolError("text is empty", invalid=True)
    words = (text.lower() if lowercase else text).split()
    return {"words": len(words), "distinct": len(set(words))}


@tool(description="Divides a by b (fails on b = 0, to show errors as results).")
def py_divide(a: float, b: float) -> float:
    return a / b


def _strings(key: str) -> list[str]:
    cfg = config() or {}
    return [str(w).lower() for w in cfg.get(key, [])]


@before_tool_call(priority=40)
def guard(event: ToolCallEvent) -> Any:
    text = str(event.params).lower()
    for word in _strings("blockWords"):
        if word in text:
            return block(f"py-word-tools: parameters mention `{word}`")
    if event.tool.lower() in _strings("approveTools"):
        return require_approval(f"Run `{event.tool}`", f"{event.tool} with {event.params}")
    if str(event.params).lower().count("boom"):
        raise RuntimeError("the hook itself failed")
    return allow()


@observe("after_tool_call")
def audit(event: ToolResultEvent) -> None:
    ok = "true" if event.error is None else "false"
    log("info", f"observed after_tool_call {event.tool} ok={ok}")


@observe("session_start")
def started(event: Observed) -> None:
    log("info", f"observed session_start {event.fields['session_id']}")


@tool_result_persist()
def hide(event: PersistEvent) -> str | None:
    text = event.content
    for word in _strings("hideInTranscript"):
        text = text.replace(word, "[hidden]")
    return text if text != event.content else None


@before_agent_start()
def gate(event: StartEvent) -> Any:
    stop = (config() or {}).get("stopWord")
    if stop and stop in event.prompt:
        return block(f"py-word-tools: the message contains `{stop}`")
    return None


@before_agent_reply()
def canned(event: TurnEvent) -> Any:
    replies = (config() or {}).get("cannedReplies") or {}
    reply = replies.get(event.prompt.strip())
    return reply if isinstance(reply, str) else None


@before_agent_finalize()
def mention(event: FinalizeEvent) -> Any:
    word = (config() or {}).get("mustMention")
    if word and word not in event.answer:
        return Revise(f"Please mention {word}.")
    return None


@agent_turn_prepare()
def turn_context(event: TurnEvent) -> PromptEdit | None:
    context = (config() or {}).get("turnContext")
    if not isinstance(context, str):
        return None
    return PromptEdit(append_context=f"[{event.runtime}] {context}")


@resolve_exec_env()
def exec_env(event: ExecEvent) -> dict[str, str]:
    env = (config() or {}).get("execEnv") or {}
    return {str(k): str(v).replace("{command}", event.command) for k, v in env.items()}
