"""What a plugin registers (tools and hooks), in plain Python terms, and
the decisions its handlers return. Nothing here imports the component
bindings, so plugins can be unit-tested with ordinary Python."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Optional, TypeVar, Union

from ._schema import schema_of

F = TypeVar("F", bound=Callable[..., Any])


class ToolError(Exception):
    """Raise to fail a tool call with this message (the model sees it).
    ``invalid=True`` says the parameters cannot be used."""

    def __init__(self, message: str, invalid: bool = False) -> None:
        super().__init__(message)
        self.invalid = invalid


_UNPARSED: Any = object()


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class ToolCallEvent:
    """A tool call about to run (`before_tool_call`). ``params`` is parsed
    from JSON on first use (a hook that does not read it pays nothing)."""

    __slots__ = (
        "tool", "call_id", "_params", "_params_text", "tool_plugin", "agent_id",
        "session_id", "model_ref",
    )

    def __init__(
        self,
        tool: str,
        call_id: str,
        params: Any,
        tool_plugin: Optional[str],
        agent_id: str,
        session_id: Optional[str],
        model_ref: str,
    ) -> None:
        self.tool = tool
        self.call_id = call_id
        self._params = params
        self._params_text = ""
        self.tool_plugin = tool_plugin
        self.agent_id = agent_id
        self.session_id = session_id
        self.model_ref = model_ref

    @property
    def params(self) -> Any:
        """The call's parameters."""
        if self._params is _UNPARSED:
            self._params = _parse(self._params_text)
        return self._params

    def __repr__(self) -> str:
        return f"ToolCallEvent(tool={self.tool!r}, call_id={self.call_id!r}, params={self.params!r})"


class ToolResultEvent:
    """A tool call that ran (`after_tool_call`, `tool_result`): ``result``
    when it succeeded, ``error`` when it failed. ``params`` and ``result``
    are parsed from JSON on first use."""

    __slots__ = (
        "tool", "call_id", "_params", "_params_text", "_result", "_result_text", "error",
        "duration_ms", "agent_id", "session_id", "model_ref",
    )

    def __init__(
        self,
        tool: str,
        call_id: str,
        params: Any,
        result: Any,
        error: Optional[str],
        duration_ms: int,
        agent_id: str,
        session_id: Optional[str],
        model_ref: str,
    ) -> None:
        self.tool = tool
        self.call_id = call_id
        self._params = params
        self._params_text = ""
        self._result = result
        self._result_text = ""
        self.error = error
        self.duration_ms = duration_ms
        self.agent_id = agent_id
        self.session_id = session_id
        self.model_ref = model_ref

    @property
    def params(self) -> Any:
        """The parameters the tool ran with."""
        if self._params is _UNPARSED:
            self._params = _parse(self._params_text)
        return self._params

    @property
    def result(self) -> Any:
        """The tool's result (``None`` when it failed)."""
        if self._result is _UNPARSED:
            self._result = _parse(self._result_text)
        return self._result

    def __repr__(self) -> str:
        return f"ToolResultEvent(tool={self.tool!r}, call_id={self.call_id!r}, error={self.error!r})"


@dataclass(frozen=True)
class PromptEvent:
    """A turn's prompt before it is sent (`before_prompt_build`)."""

    session_id: Optional[str]
    agent_id: str
    system: Optional[str]
    prompt: str


@dataclass(frozen=True)
class PromptEdit:
    """Edits to a prompt (OpenClaw's `before_prompt_build` result fields)."""

    prepend_context: Optional[str] = None
    append_context: Optional[str] = None
    system_prompt: Optional[str] = None
    prepend_system_context: Optional[str] = None
    append_system_context: Optional[str] = None


@dataclass(frozen=True)
class PersistEvent:
    """A tool result about to be stored (`tool_result_persist`)."""

    tool: str
    call_id: str
    content: str
    is_error: bool
    agent_id: str
    session_id: Optional[str]
    model_ref: str


@dataclass(frozen=True)
class MessageEvent:
    """A message about to be stored (`before_message_write`): its role
    (``user``, ``assistant``, ``tool_result``) and text."""

    session_id: str
    agent_id: str
    role: str
    text: str


@dataclass(frozen=True)
class KeepOut:
    """Do not store the message (`before_message_write`)."""

    reason: str


@dataclass(frozen=True)
class ModelEvent:
    """A run's model about to be resolved (`before_model_resolve`)."""

    session_id: Optional[str]
    agent_id: str
    prompt: str
    provider: str
    model: str


@dataclass(frozen=True)
class ModelOverride:
    """Run another provider and/or model of the host's catalog."""

    provider: Optional[str] = None
    model: Optional[str] = None


@dataclass(frozen=True)
class StartEvent:
    """A run about to start (`before_agent_start`)."""

    run_id: str
    session_id: Optional[str]
    agent_id: str
    model_ref: str
    prompt: str


@dataclass(frozen=True)
class TurnEvent:
    """A turn about to run on its runtime (`before_agent_run`,
    `before_agent_reply`)."""

    session_id: Optional[str]
    agent_id: str
    runtime: str
    model_ref: str
    prompt: str


@dataclass(frozen=True)
class FinalizeEvent:
    """The runtime's final answer (`before_agent_finalize`)."""

    turn: TurnEvent
    answer: str
    revisions: int


@dataclass(frozen=True)
class Revise:
    """Ask the runtime for one more pass; ``reason`` is the turn's next message."""

    reason: str


@dataclass(frozen=True)
class Finalize:
    """Accept the runtime's answer now."""


@dataclass(frozen=True)
class CompactionEvent:
    """Older context to summarize (the compaction provider)."""

    session_id: Optional[str]
    message_count: int
    token_count: int
    compacted_count: int
    transcript: str


@dataclass(frozen=True)
class Observed:
    """An observe-only hook's event: its name and fields as plain data."""

    hook: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Allow:
    """Let the call go on."""


@dataclass(frozen=True)
class Block:
    """Stop the call; the model sees the reason."""

    reason: str


@dataclass(frozen=True)
class Rewrite:
    """Go on with these parameters (shallow-merged over the originals)."""

    params: dict[str, Any]


@dataclass(frozen=True)
class RequireApproval:
    """Ask the operator first (OpenClaw's ``requireApproval``)."""

    title: str
    description: str
    severity: Literal["info", "warning", "critical"] = "warning"
    timeout_ms: Optional[int] = None
    timeout_behavior: Literal["deny", "allow"] = "deny"


Decision = Union[Allow, Block, Rewrite, RequireApproval]


@dataclass(frozen=True)
class Keep:
    """Keep the tool result as it is."""


@dataclass(frozen=True)
class Replace:
    """Replace the result the model sees (``error`` makes it an error)."""

    result: Any = None
    error: Optional[str] = None


def allow() -> Allow:
    """Let the call go on."""
    return Allow()


def block(reason: str) -> Block:
    """Stop the call with ``reason``."""
    return Block(reason)


def rewrite(params: dict[str, Any]) -> Rewrite:
    """Go on with ``params`` merged over the originals."""
    return Rewrite(params)


def require_approval(
    title: str,
    description: str = "",
    severity: Literal["info", "warning", "critical"] = "warning",
    timeout_ms: Optional[int] = None,
    timeout_behavior: Literal["deny", "allow"] = "deny",
) -> RequireApproval:
    """Ask the operator to approve the call."""
    return RequireApproval(title, description, severity, timeout_ms, timeout_behavior)


@dataclass
class Tool:
    """A registered tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]

    def call(self, params_json: str) -> str:
        """Run the tool on JSON parameters; the JSON of its result.
        Raises ``ToolError`` (never anything else)."""
        try:
            params = json.loads(params_json) if params_json else {}
        except ValueError as e:
            raise ToolError(f"parameters are not JSON: {e}", invalid=True) from e
        if not isinstance(params, dict):
            raise ToolError("parameters must be a JSON object", invalid=True)
        try:
            result = self.func(**params)
        except ToolError:
            raise
        except TypeError as e:
            raise ToolError(f"{self.name}: {e}", invalid=True) from e
        except Exception as e:  # every error becomes an error result
            raise ToolError(f"{self.name} failed: {type(e).__name__}: {e}") from e
        try:
            return json.dumps(result)
        except (TypeError, ValueError) as e:
            raise ToolError(f"{self.name} returned something that is not JSON: {e}") from e


@dataclass
class Handler:
    """A registered hook handler."""

    hook: str
    priority: int
    func: Callable[..., Any]
    tools: list[str] = field(default_factory=list)


#: Hooks ``observe`` accepts.
OBSERVABLE = (
    "after_tool_call",
    "session_start",
    "session_end",
    "agent_end",
    "before_reset",
    "llm_input",
    "llm_output",
    "model_call_started",
    "model_call_ended",
    "before_compaction",
    "after_compaction",
)


@dataclass
class Registry:
    """Everything a plugin module registered."""

    tools: dict[str, Tool] = field(default_factory=dict)
    handlers: list[Handler] = field(default_factory=list)

    by_hook: dict[str, Handler] = field(default_factory=dict)

    def handler(self, hook: str) -> Optional[Handler]:
        """The handler of ``hook``, if one is registered."""
        return self.by_hook.get(hook)

    def add_handler(self, handler: Handler) -> None:
        """Register ``handler``; one per hook."""
        if handler.hook in self.by_hook:
            raise ValueError(f"a `{handler.hook}` handler is already registered")
        self.handlers.append(handler)
        self.by_hook[handler.hook] = handler


#: The registry of this component (one plugin per component).
REGISTRY = Registry()


def tool(
    name: Optional[str] = None, description: Optional[str] = None
) -> Callable[[F], F]:
    """Register a tool. Its parameters' JSON Schema comes from the function's
    type hints; its description from ``description`` or the docstring."""

    def register(func: F) -> F:
        tool_name = name or func.__name__
        if tool_name in REGISTRY.tools:
            raise ValueError(f"tool `{tool_name}` is already registered")
        REGISTRY.tools[tool_name] = Tool(
            name=tool_name,
            description=description or (func.__doc__ or "").strip(),
            parameters=schema_of(func),
            func=func,
        )
        return func

    return register


def before_tool_call(
    priority: int = 0, tools: Optional[list[str]] = None
) -> Callable[[F], F]:
    """Register the ``before_tool_call`` handler: it gets a ``ToolCallEvent``
    and returns ``allow()``, ``block(..)``, ``rewrite(..)`` or
    ``require_approval(..)``. ``tools`` narrows it to some tools (names or
    globs). An exception blocks the call."""

    def register(func: F) -> F:
        REGISTRY.add_handler(Handler("before_tool_call", priority, func, list(tools or [])))
        return func

    return register


def tool_result(priority: int = 0, tools: Optional[list[str]] = None) -> Callable[[F], F]:
    """Register the ``tool_result`` middleware (the operator must grant
    ``grants.toolResults``): it gets a ``ToolResultEvent`` and returns
    ``Keep()`` or ``Replace(..)``. An exception withholds the result."""

    def register(func: F) -> F:
        REGISTRY.add_handler(Handler("tool_result", priority, func, list(tools or [])))
        return func

    return register


def before_prompt_build(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_prompt_build`` handler: it gets a
    ``PromptEvent`` and returns a ``PromptEdit`` or ``None``."""

    def register(func: F) -> F:
        REGISTRY.add_handler(Handler("before_prompt_build", priority, func))
        return func

    return register


def _handler(hook: str, priority: int) -> Callable[[F], F]:
    def register(func: F) -> F:
        REGISTRY.add_handler(Handler(hook, priority, func))
        return func

    return register


def tool_result_persist(priority: int = 0) -> Callable[[F], F]:
    """Register the ``tool_result_persist`` handler: it gets a
    ``PersistEvent`` and returns the text to store instead, or ``None``. An
    exception withholds the text from the transcript."""
    return _handler("tool_result_persist", priority)


def before_message_write(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_message_write`` handler (the operator must allow
    conversation access): it gets a ``MessageEvent`` and returns ``None``
    (store it), a text to store instead, or ``KeepOut(reason)``."""
    return _handler("before_message_write", priority)


def before_model_resolve(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_model_resolve`` handler: it gets a
    ``ModelEvent`` and returns a ``ModelOverride`` or ``None``."""
    return _handler("before_model_resolve", priority)


def before_agent_start(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_agent_start`` handler: it gets a ``StartEvent``
    and returns ``None`` (start) or ``block(reason)``."""
    return _handler("before_agent_start", priority)


def before_agent_run(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_agent_run`` handler (any runtime): it gets a
    ``TurnEvent`` and returns ``None`` (run) or ``block(reason)``."""
    return _handler("before_agent_run", priority)


def before_agent_reply(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_agent_reply`` handler: it gets a ``TurnEvent``
    and returns ``None`` (the runtime runs) or the turn's answer."""
    return _handler("before_agent_reply", priority)


def before_agent_finalize(priority: int = 0) -> Callable[[F], F]:
    """Register the ``before_agent_finalize`` handler: it gets a
    ``FinalizeEvent`` and returns ``None``, ``Revise(reason)`` or
    ``Finalize()``."""
    return _handler("before_agent_finalize", priority)


@dataclass(frozen=True)
class ExecEvent:
    """A command the host's ``exec`` tool is about to run
    (`resolve_exec_env`)."""

    command: str
    cwd: str
    call_id: str
    agent_id: str
    session_id: Optional[str]
    model_ref: str


def agent_turn_prepare(priority: int = 0) -> Callable[[F], F]:
    """Register the ``agent_turn_prepare`` handler (any runtime, before
    ``before_prompt_build``): it gets a ``TurnEvent`` and returns ``None`` or
    a ``PromptEdit`` (its ``prepend_context`` / ``append_context`` are put
    around the user's message)."""
    return _handler("agent_turn_prepare", priority)


def resolve_exec_env(priority: int = 0) -> Callable[[F], F]:
    """Register the ``resolve_exec_env`` handler: it gets an ``ExecEvent``
    and returns a ``dict`` of variables for the command (only the names the
    operator granted in ``grants.execEnv`` are set)."""
    return _handler("resolve_exec_env", priority)


def compaction_provider(priority: int = 0) -> Callable[[F], F]:
    """Register a compaction summary provider (the operator must grant
    ``grants.compaction``): it gets a ``CompactionEvent`` and returns the
    summary or ``None``."""
    return _handler("compaction_provider", priority)


def observe(*hooks: str, priority: int = 0) -> Callable[[F], F]:
    """Register an observer of the named observe-only hooks (see
    ``OBSERVABLE``); it gets an ``Observed``. What it raises is logged."""

    def register(func: F) -> F:
        for hook in hooks:
            if hook not in OBSERVABLE:
                raise ValueError(f"`{hook}` is not an observe-only hook; known: {OBSERVABLE}")
            REGISTRY.add_handler(Handler(hook, priority, func))
        return func

    return register
