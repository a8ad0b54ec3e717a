"""A task corrected for two preferences (photos t-77da4fd8a8db: type hints and `make
test`) shows the analysts both ids, and per-edit staging credits an edit for either
(sleep/night/held_out.preferences_by_task, sleep/night/replay_env.py)."""

from __future__ import annotations

import asyncio

from core.models.types import TransientError
from core.optimizer.reflection_groups import render_results
from core.skill.edits import Edit
from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import Correction, MinedTask
from sleep.night.held_out import gate_roles, held_out_occurrences, preferences_by_task
from sleep.night.preference_gate import PreferenceGate
from sleep.night.replay_env import ReplayEnvironment

HINTS = "no, add type hints to the new function"
TESTS = "did you run make test?"


def task(tid: str, *said: str) -> MinedTask:
    return MinedTask(
        id=tid,
        intent=f"change {tid}",
        project=None,
        rubric="as asked",
        corrections=[
            Correction(text, f"claude:{tid}-{i}", "claude", f"2026-12-0{i + 1}")
            for i, text in enumerate(said)
        ],
    )


def tasks() -> list[MinedTask]:
    return [task("t-both", HINTS, TESTS), task("t-hints", HINTS), task("t-tests", TESTS)]


def test_the_analysts_see_every_preference_a_task_was_corrected_for():
    """Fails on the old code: the item showed one preference id (the task's first)."""
    preferences = group_preferences(tasks())
    assert len(preferences) == 2
    env = ReplayEnvironment(
        {"val": tasks()}, judge=None, preferences=preferences_by_task(preferences)
    )
    item = next(i for i in env.load_split("val") if i.id == "t-both")

    async def down(_messages, **_):
        raise TransientError("the target is down")

    shown = render_results([asyncio.run(env.rollout(item, "", down))], max_chars=None)
    ids = sorted(p.id for p in preferences)
    assert f"preferences {', '.join(ids)}" in shown or f"preferences {ids[1]}, {ids[0]}" in shown


def test_an_edit_for_either_preference_is_credited_by_the_task_that_moved():
    preferences = group_preferences(tasks())
    roles = gate_roles([t for t in tasks() if t.id == "t-both"])
    gate = PreferenceGate(roles, 0.7, held_out_occurrences(preferences, roles))
    before, after = {"t-both": 0.2}, {"t-both": 1.0}
    for pref in preferences:
        edit = Edit(op="append", content="a rule", rationale=f"{pref.id}: asked twice")
        assert gate.attribute([edit], before, after) == [], pref.text
