"""A preference's held-out occurrence is one the person corrected after an answer where
there is one (sleep/night/held_out.py): on the held-out ledger corpus (issue 37, round 6)
the occurrences held out for "ask before deleting" and "money is Decimal" were requests
that stated the need up front, which the current file already passes, so no rule for
either could show evidence. Stable and deterministic, and never a task an earlier night
trained on."""

from __future__ import annotations

import json

from sleep.mine.split import split_key, split_of
from sleep.mine.tasks import Correction, MinedTask
from sleep.night.held_out import night_splits
from sleep.night.split_scheme import trained_pins
from tests.sleep.test_held_out import FRACTIONS, _letters

FIX = "why float? its money, use Decimal"
UP_FRONT = "amounts stay Decimal pls"


def _intent(tid: str, up_front: bool) -> str:
    return f"{UP_FRONT} - task {tid}" if up_front else f"task {tid}"


def _ids(split: str, n: int, *, up_front: bool) -> list[str]:
    """Task ids whose request the hash puts in `split` (it hashes the request's shape)."""
    ids = [f"t-{_letters(i)}" for i in (range(200, 400) if up_front else range(200))]
    return [t for t in ids if split_of(split_key(_intent(t, up_front)), **FRACTIONS) == split][:n]


def _occurrence(tid: str, day: str, *, up_front: bool) -> MinedTask:
    """A request corrected for Decimal money: in the request itself, or after its answer."""
    session = f"claude:{tid}"
    intent = _intent(tid, up_front)
    said = Correction(UP_FRONT if up_front else FIX, session, "claude", day)
    return MinedTask(tid, intent, "/p", kind="agentic", rubric="Decimal", first_seen=day,
                     last_seen=day, session_started=day, corrections=[said],
                     source_sessions=[session])  # fmt: skip


def _pair(stated_split: str = "train") -> list[MinedTask]:
    """An older occurrence corrected after its answer (hashed to train) and a newer one
    stated up front (hashed to `stated_split`)."""
    (corrected,) = _ids("train", 1, up_front=False)
    (stated,) = _ids(stated_split, 1, up_front=True)
    return [
        _occurrence(corrected, "2026-11-01", up_front=False),
        _occurrence(stated, "2026-11-05", up_front=True),
    ]


def _val(tasks: list[MinedTask], **kw) -> list[str]:
    return [t.id for t in night_splits(tasks, max_tasks=10, **FRACTIONS, **kw)["val"]]


def test_the_occurrence_held_out_is_one_corrected_after_an_answer():
    """Fails on the old code: the newest occurrence was held out, stated up front."""
    tasks = _pair()
    corrected = tasks[0].id
    assert _val(tasks) == [corrected]
    assert _val(list(reversed(tasks))) == [corrected]  # whatever the order
    # with only up-front occurrences, the newest of them is held out as before
    only_stated = [_occurrence(t, f"2026-11-0{i + 1}", up_front=True) for i, t in enumerate(
        _ids("train", 2, up_front=True))]  # fmt: skip
    assert _val(only_stated) == [only_stated[1].id]


def test_a_hashed_out_up_front_occurrence_gives_way_to_a_corrected_one():
    """The hash held out the up-front one: the corrected one is held out instead, and the
    up-front one trains, so one occurrence of the two is left for the analysts to see."""
    tasks = _pair(stated_split="val")
    assert _val(tasks) == [tasks[0].id]


def test_a_corrected_occurrence_an_earlier_night_trained_on_is_never_held_out(tmp_path):
    """The trained one stays train (the optimizer saw it): the up-front one is held out."""
    tasks = _pair()
    corrected, stated = (t.id for t in tasks)
    night = tmp_path / "nights" / "sleep-2026-11-02-p"
    night.mkdir(parents=True)
    frozen = {"skills": {"p": {"train": [{"id": corrected}], "val": [], "test": []}}}
    (night / "tasks.json").write_text(json.dumps(frozen))
    pinned = trained_pins(tmp_path)
    assert pinned == {corrected: "train"}
    assert _val(tasks, pinned=pinned) == [stated]
