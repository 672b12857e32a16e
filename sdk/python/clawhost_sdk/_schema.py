"""JSON Schema of a tool's parameters, from its function's type hints."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from typing import Any, Callable


def _type_schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple):
        item = args[0] if args else Any
        return {"type": "array", "items": _type_schema(item)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if len(present) == 1:
            return _type_schema(present[0])
        return {"anyOf": [_type_schema(a) for a in present]}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _object_schema(
            {f.name: f.type for f in dataclasses.fields(hint)},
            {
                f.name
                for f in dataclasses.fields(hint)
                if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
            },
            typing.get_type_hints(hint),
        )
    raise TypeError(f"cannot derive a JSON Schema for {hint!r}")


def _object_schema(
    names: dict[str, Any], required: set[str], hints: dict[str, Any]
) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: _type_schema(hints.get(name, Any)) for name in names},
        "required": [name for name in names if name in required],
        "additionalProperties": False,
    }


def schema_of(func: Callable[..., Any]) -> dict[str, Any]:
    """The object schema of ``func``'s keyword parameters: a parameter
    without a default is required; ``Optional[T]`` and defaults are not."""
    sig = inspect.signature(func)
    hints = typing.get_type_hints(func)
    names: dict[str, Any] = {}
    required: set[str] = set()
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool `{func.__name__}`: *args and **kwargs have no schema")
        names[name] = hints.get(name, Any)
        optional = typing.get_origin(hints.get(name)) in (typing.Union, types.UnionType) and (
            type(None) in typing.get_args(hints.get(name))
        )
        if p.default is p.empty and not optional:
            required.add(name)
    return _object_schema(names, required, hints)
