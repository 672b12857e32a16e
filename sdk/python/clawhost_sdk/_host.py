"""The host imports (`log`, `config`); usable outside a component too (tests)."""

from __future__ import annotations

import json
import sys
from typing import Any


def log(level: str, message: str) -> None:
    """Write a line to the host's log, tagged with this plugin's id.

    ``level`` is one of ``trace``, ``debug``, ``info``, ``warn``, ``error``.
    """
    try:
        from wit_world.imports import host
    except ImportError:  # not inside a component
        print(f"[{level}] {message}", file=sys.stderr)
        return
    levels = {
        "trace": host.Level.TRACE,
        "debug": host.Level.DEBUG,
        "info": host.Level.INFO,
        "warn": host.Level.WARN,
        "error": host.Level.ERROR,
    }
    host.log(levels.get(level, host.Level.INFO), message)


def config() -> Any:
    """This plugin's configuration as the operator set it (``None`` when unset)."""
    try:
        from wit_world.imports import host
    except ImportError:
        return None
    return json.loads(host.config())
