"""A dataclass as plain dicts, lists and values, the way `dataclasses.asdict` gives it,
without its deep copy of every string and number. On Python 3.11 asdict calls
copy.deepcopy once per leaf: writing a run's events, rollouts and state spent most of its
serialising time there (Python 3.12's asdict skips those copies the same way)."""

from __future__ import annotations

import copy
import dataclasses
import functools
from typing import Any

# Values asdict's deep copy would return as they are: they cannot be changed in place.
_IMMUTABLE = frozenset({type(None), bool, int, float, complex, str, bytes})


def as_dict(obj: Any) -> dict[str, Any]:
    """`dataclasses.asdict(obj)`: the same dict, nested dataclasses, lists, tuples and
    dicts converted alike, anything else deep-copied."""
    if not _is_instance(obj):
        raise TypeError("as_dict() should be called on dataclass instances")
    return _plain(obj)


def _is_instance(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


@functools.cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if _is_instance(value):
        return {name: _plain(getattr(value, name)) for name in _names(kind)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return kind(*[_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return kind(_plain(v) for v in value)
    if isinstance(value, dict):
        return kind((_plain(k), _plain(v)) for k, v in value.items())
    return copy.deepcopy(value)
