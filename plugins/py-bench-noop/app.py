"""Benchmark fixture: no-op `before_tool_call` and `after_tool_call`
handlers, to measure what the Python SDK and runtime cost per hook."""

from typing import Any

from clawhost_sdk import ToolCallEvent, ToolResultEvent, allow, before_tool_call, observe


@before_tool_call()
def noop(event: ToolCallEvent) -> Any:
    return allow()


@observe("after_tool_call")
def seen(event: ToolResultEvent) -> None:
    return None
