"""Write clawhost plugins in Python (plugin API 0.2.3).

Register tools and hooks with the decorators below in your module, then build
it with ``clawhost-py build <package-dir>`` into ``plugin.wasm`` beside your
``openclaw.plugin.json``. Errors your code raises become error results (a
tool error the model sees, a blocked call, a kept result); they never trap
the component.

    from clawhost_sdk import tool, before_tool_call, block, allow

    @tool(description="Shouts the text")
    def shout(text: str) -> str:
        return text.upper()

    @before_tool_call(priority=50, tools=["shout"])
    def no_secrets(event):
        return block("no secrets") if "secret" in str(event.params) else allow()
"""

from __future__ import annotations

from ._registry import (
    REGISTRY,
    Allow,
    Block,
    CompactionEvent,
    Decision,
    ExecEvent,
    Finalize,
    FinalizeEvent,
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
    agent_turn_prepare,
    allow,
    before_agent_finalize,
    before_agent_reply,
    before_agent_run,
    before_agent_start,
    before_message_write,
    before_model_resolve,
    before_prompt_build,
    before_tool_call,
    block,
    compaction_provider,
    observe,
    require_approval,
    resolve_exec_env,
    rewrite,
    tool,
    tool_result,
    tool_result_persist,
)
from ._host import config, log

API_VERSION = "0.2.3"

__all__ = [
    "API_VERSION",
    "REGISTRY",
    "Allow",
    "Block",
    "CompactionEvent",
    "Decision",
    "ExecEvent",
    "Finalize",
    "FinalizeEvent",
    "Keep",
    "KeepOut",
    "MessageEvent",
    "ModelEvent",
    "ModelOverride",
    "Observed",
    "PersistEvent",
    "StartEvent",
    "PromptEdit",
    "PromptEvent",
    "Replace",
    "RequireApproval",
    "Revise",
    "Rewrite",
    "ToolCallEvent",
    "ToolError",
    "ToolResultEvent",
    "TurnEvent",
    "agent_turn_prepare",
    "allow",
    "before_agent_finalize",
    "before_agent_reply",
    "before_agent_run",
    "before_agent_start",
    "before_message_write",
    "before_model_resolve",
    "before_prompt_build",
    "before_tool_call",
    "block",
    "compaction_provider",
    "config",
    "log",
    "observe",
    "require_approval",
    "resolve_exec_env",
    "rewrite",
    "tool",
    "tool_result",
    "tool_result_persist",
]
