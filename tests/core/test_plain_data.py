"""core.plain_data.as_dict gives what dataclasses.asdict gives, for any mix of nested
dataclasses, containers and values, and shares no mutable container with its input."""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.plain_data import as_dict
from core.run.events import CandidateProposed, RolloutFinished


@dataclasses.dataclass
class Box:
    value: Any
    label: str = "box"


Pair = namedtuple("Pair", "left right")

leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
leaves |= st.binary(max_size=4) | st.frozensets(st.integers(), max_size=3)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.builds(Pair, inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.sets(st.integers(), max_size=3)
        | st.builds(Box, inner)
    ),
    max_leaves=12,
)


def containers(value: Any):
    """Every mutable container inside `value`, by identity."""
    if isinstance(value, (list, dict, set)):
        yield value
    items = value.values() if isinstance(value, dict) else value
    if isinstance(value, (list, tuple, dict, set)):
        for item in items:
            yield from containers(item)


@given(values)
def test_the_same_as_asdict_and_no_container_shared(value):
    box = Box(value)
    got = as_dict(box)
    assert got == dataclasses.asdict(box)
    assert repr(got) == repr(dataclasses.asdict(box))  # same types: tuple, namedtuple, ...
    mine = {id(c) for c in containers(got)}
    assert not mine & {id(c) for c in containers(value)}


def test_events_serialise_as_before():
    finished = RolloutFinished(
        phase="gate", step=2, split="val", skill_hash="h", item_id="v01", task_type="qa",
        hard=1.0, soft=0.5, latency_s=0.1, prediction="Oslo",
    )  # fmt: skip
    proposed = CandidateProposed(
        step=2, candidate_hash="c", parent_hash="p", diff="+a",
        edits=[{"op": "append", "lines": ["a", "b"]}], problems=["x"],
    )  # fmt: skip
    for event in (finished, proposed):
        assert event.to_dict() == {"type": event.type, **dataclasses.asdict(event)}


def test_only_dataclass_instances():
    with pytest.raises(TypeError):
        as_dict(Box)
    with pytest.raises(TypeError):
        as_dict({"a": 1})
