"""The gate's held-out tasks (sleep/night/held_out.py): a night gates a skill only on at least
`min_val_tasks` of them (default 3), says how many it is waiting for, and takes them from
every earlier night of the project and skill, on the scripted TEST DOUBLE
(tests/sleep/night_double.py) and a real skills repository."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from sleep.mine.split import split_key, split_of
from sleep.mine.tasks import MinedTask
from sleep.night.estimate import estimate_night
from sleep.night.held_out import night_splits, waiting_for_val
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night
from sleep.state.settings import DEFAULT_MIN_VAL_TASKS
from tests.sleep.night_double import INSTALL_PROMPT, NAMES
from tests.sleep.test_night import DAY, night_config, project, repo  # noqa: F401

FRACTIONS = {"val_fraction": 0.3, "test_fraction": 0.0}


def _letters(i: int) -> str:
    """i in letters (a task's split hashes its request's shape, where digits are one '#')."""
    return "".join("abcdefghijklmnopqrstuvwxyz"[i // 26**k % 26] for k in range(3))


def _ids(split: str, n: int) -> list[str]:
    ids = [f"t-{_letters(i)}" for i in range(400)]
    return [t for t in ids if split_of(split_key(f"task {t}"), **FRACTIONS) == split][:n]


def _task(tid: str, *, last_seen: str = "2026-11-01", **kw) -> MinedTask:
    return MinedTask(tid, f"task {tid}", "/p", rubric="use pnpm", last_seen=last_seen, **kw)


def test_held_out_tasks_are_never_crowded_out_by_train_tasks():
    """max_tasks caps what the night learns from; the held-out tasks have their own cap."""
    train = [_task(t, occurrences=5) for t in _ids("train", 20)]  # recurring: first by priority
    val = [_task(t) for t in _ids("val", 6)]
    splits = night_splits(train + val, max_tasks=4, max_val_tasks=30, **FRACTIONS)
    assert len(splits["train"]) == 4
    assert sorted(t.id for t in splits["val"]) == sorted(t.id for t in val)


def test_the_held_out_cap_keeps_the_most_recent_and_never_an_unreplayable_one():
    ids = _ids("val", 5)
    tasks = [_task(tid, last_seen=f"2026-11-{10 + i:02d}") for i, tid in enumerate(ids)]
    tasks.append(_task(_ids("val", 6)[5], last_seen="2026-12-31", kind="external"))
    splits = night_splits(tasks, max_tasks=40, max_val_tasks=3, **FRACTIONS)
    assert sorted(t.id for t in splits["val"]) == sorted(ids[-3:])  # the newest three


def test_train_only_tasks_never_count_as_held_out():
    """A task with nothing to judge it by is train whatever its id's hash says."""
    ids = _ids("val", 4)
    tasks = [MinedTask(t, "explain it", "/p", train_only=True) for t in ids]
    splits = night_splits(tasks, max_tasks=40, **FRACTIONS)
    assert splits["val"] == [] and len(splits["train"]) == 4
    assert waiting_for_val(len(splits["val"]), 6).startswith(
        "waiting for more held-out tasks (0 of 6)"
    )


def test_enough_held_out_tasks_wait_for_nothing():
    assert waiting_for_val(6, 6) is None and waiting_for_val(9, 6) is None
    assert DEFAULT_MIN_VAL_TASKS == 3


# -- whole nights --------------------------------------------------------------------------


def _parts(folder: Path, split: str, n: int, skip: int = 0) -> list[str]:
    """Package names whose install task is `split`."""

    def of(part: str) -> str:
        return split_of(split_key(INSTALL_PROMPT.format(part=part)), **FRACTIONS)

    found = [p for p in NAMES if of(p) == split][skip : skip + n]
    assert len(found) == n, "pick more NAMES"
    return found


def _sessions(folder: Path, parts: list[str], day: str) -> list[dict]:
    """One session per part: the install question, corrected to pnpm (so it has a rubric
    and can be held out)."""
    return [
        {
            "source": "claude", "session_id": f"{day}-{part}", "cwd": str(folder),
            "branch": "main", "file": f"/x/{day}-{part}.jsonl", "automation": False,
            "tasks": [
                {"text": INSTALL_PROMPT.format(part=part), "timestamp": f"{day}T10:00:00Z",
                 "aborted": False},
                {"text": "no, use pnpm instead of npm", "timestamp": None, "aborted": False},
            ],
        }
        for part in parts
    ]  # fmt: skip


def _night(tmp_path, repo, project, sessions, today) -> Night:  # noqa: F811
    return Night(
        state_dir=tmp_path / "state",
        repo=repo,
        config=night_config(tmp_path),
        harvest=lambda _freeze: Harvested(sessions),
        project=project,
        today=today,
    )  # fmt: skip  (min_val_tasks: the default, 3)


def waiting_night(tmp_path, repo, project) -> Night:  # noqa: F811
    """A night of 2 held-out and 2 train tasks, with the default minimum of 3."""
    parts = _parts(project, "val", 2) + _parts(project, "train", 2)
    return _night(tmp_path, repo, project, _sessions(project, parts, "2026-11-30"), DAY)


async def test_too_few_held_out_tasks_stage_nothing_and_say_how_many(tmp_path, repo, project):  # noqa: F811
    night = waiting_night(tmp_path, repo, project)
    night.dry = True  # dry-run says it first, writing nothing
    plan = await night.plan()
    [route] = plan.routes
    assert route["waiting_for_val"].startswith("waiting for more held-out tasks (2 of 3)")
    estimate = await estimate_night(night, plan)  # it would spend nothing on the skill
    assert estimate["project"].startswith("no calls: waiting for more held-out tasks (2 of 3)")
    lines: list[str] = []
    night = waiting_night(tmp_path, repo, project)
    night.on_line = lines.append
    result = await night.run()
    outcome = result.skills["project"]
    assert outcome["status"] == "skipped" and outcome["val"] == 2
    assert outcome["reason"].startswith("waiting for more held-out tasks (2 of 3)")
    assert "waiting for more held-out tasks (2 of 3)" in result.message
    assert any("waiting for more held-out tasks (2 of 3)" in line for line in lines)
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["skills"]["project"]["reason"] == outcome["reason"]
    assert "waiting for more held-out tasks (2 of 3)" in saved["message"]
    assert repo.staged_branches() == []
    assert not (night.folder / "project").exists()  # no run: not one model call


async def test_held_out_tasks_accumulate_until_the_gate_has_enough(tmp_path, repo, project):  # noqa: F811
    """Night 1 holds 2 held-out tasks and waits; night 2's sessions add 3 more, and it
    gates on all 5: the staged commit says Val-Items: 5 and how sure (5 of 5 improved)."""
    one = await waiting_night(tmp_path, repo, project).run()
    assert one.skills["project"]["status"] == "skipped" and one.skills["project"]["val"] == 2

    second = _parts(project, "val", 3, skip=2) + _parts(project, "train", 2, skip=2)
    night = _night(
        tmp_path, repo, project, _sessions(project, second, "2026-12-01"), DAY + dt.timedelta(1)
    )
    two = await night.run()
    outcome = two.skills["project"]
    assert two.status == "finished", two.message
    assert (outcome["train"], outcome["val"]) == (4, 5)
    assert outcome["staged"] == f"staged/{night.night_id}-project"
    [commit] = repo.diff(outcome["staged"]).evidence
    assert commit.trailers["Val-Items"] == "5"
    assert commit.trailers["Items-Improved"] == "5" and commit.trailers["Items-Regressed"] == "0"
    assert commit.trailers["Evidence"] == "p=0.0625"  # 2 / 2^5


def _corrected(tid: str, day: str, preference: str = "pref-logging") -> MinedTask:
    from sleep.mine.tasks import Correction

    session = f"claude:{tid}"
    fix = Correction("no, use logging instead of print", session, "claude", day)
    return _task(tid, last_seen=day, first_seen=day, session_started=day,
                 corrections=[fix], preference=preference, source_sessions=[session])  # fmt: skip


def test_every_preference_seen_twice_has_an_occurrence_held_out():
    """Fails on the old code: the split was by hash alone, so a preference whose tasks all
    hashed to train gave the gate nothing of what the person corrected."""
    older, newer, single = _ids("train", 3)
    tasks = [
        _corrected(older, "2026-11-01"),
        _corrected(newer, "2026-11-05"),
        _corrected(single, "2026-11-02", "pref-once"),
    ]
    splits = night_splits(tasks, max_tasks=10, **FRACTIONS)
    assert [t.id for t in splits["val"]] == [newer]  # the newest: no night trained on it
    assert sorted(t.id for t in splits["train"]) == sorted([older, single])
    # a preference the hash already holds out keeps that one, and moves nothing
    held = _ids("val", 1)[0]
    splits = night_splits([_corrected(older, "2026-11-01"), _corrected(held, "2026-10-01")],
                          max_tasks=10, **FRACTIONS)  # fmt: skip
    assert [t.id for t in splits["val"]] == [held]


def test_a_skill_waiting_for_val_names_the_preferences_seen_once():
    from sleep.night.held_out import gate_roles, waiting_preferences

    once = _corrected(_ids("train", 1)[0], "2026-11-02", "pref-once")
    guard = _task(_ids("val", 1)[0], reference="Run pnpm install.")
    why = waiting_for_val(1, 3, waiting_preferences([once, guard]))
    assert why is not None and "(1 of 3)" in why
    assert '"no, use logging instead of print" (said once, waiting for a second' in why
    assert gate_roles([once, guard]) == {once.id: "occurrence", guard.id: "guard"}


def test_corrections_and_preference_survive_the_archive_and_bad_ones_are_named(tmp_path):
    import pytest

    from sleep.mine.tasks import MalformedTask, TaskArchive

    task = _corrected("t-0001", "2026-11-01")
    archive = TaskArchive(tmp_path / "tasks.json")
    archive.merge([task])
    again = archive.load()["t-0001"]
    assert again.corrections == task.corrections and again.preference == "pref-logging"
    bad = {**task.to_dict(), "corrections": [{"text": "x"}]}
    with pytest.raises(MalformedTask, match="a correction is not"):
        MinedTask.from_dict(bad)
