"""Fault injection for the crash-safety tests: `SKILLOPT_CRASH_AT=<point>` makes the
process die abruptly (exit 86, no cleanup) when it reaches that point, as kill -9 would."""

from __future__ import annotations

import os
from collections import Counter

CRASH_ENV = "SKILLOPT_CRASH_AT"
_seen: Counter[str] = Counter()


def crash_point(name: str) -> None:
    """Die here if asked to. A point reached several times can be named with `#N` for its
    N-th time (e.g. `write:before-rename:SKILL.md#2`, the second such write)."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted:
        return
    _seen[name] += 1
    if wanted == name or wanted == f"{name}#{_seen[name]}":
        os._exit(86)
