"""A tool call a tool will not run, and the argument check every tool shares. The message
goes back to the model as the call's result (our workspace tools, the officeqa tools)."""

from __future__ import annotations

import math


class ToolRefused(Exception):
    """A tool call the tools will not run; the message goes back to the model."""


def whole_number(value: object, what: str) -> int:
    """An int, or a float with no fraction (JSON gives 10.0 as a float); else refused."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise ToolRefused(f"{what} must be a whole number, got {repr(value)[:40]}")
