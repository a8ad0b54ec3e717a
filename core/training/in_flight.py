"""How many rollouts an executor keeps in flight, in words: both executors (local's
estimate and Ray's description) say it, and ray_executor must not import executor (which
loads it)."""

from __future__ import annotations

from core.words import counted


def in_flight(slots: int) -> str:
    return f"{counted(slots, 'task')} in flight"
