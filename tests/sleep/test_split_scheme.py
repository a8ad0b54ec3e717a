"""The split now hashes the request, not the task id (sleep/mine/split.py). An archive
written by nights before that change keeps no split, so every stored task would take the
new scheme's split at once, and a task an earlier night trained on could become held out.
The first night after the upgrade splits the stored tasks again, once: only val → train
moves, a task an earlier night trained on (its frozen tasks.json says so) stays train,
the scheme's version and the pins are recorded, night.json says what moved, and the next
night splits nothing again (sleep/night/split_scheme.py). Whole nights on the scripted TEST DOUBLE
(tests/sleep/night_double.py) and a real skills repository."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from core.errors import UserError
from sleep.mine.heuristic import shape_of
from sleep.mine.split import split_key, split_of
from sleep.mine.tasks import MinedTask, TaskArchive, task_id
from sleep.night.held_out import night_splits
from sleep.night.split_scheme import pinned_splits
from tests.sleep.test_held_out import FRACTIONS, _corrected, _ids, _night, _parts, _sessions
from tests.sleep.test_night import DAY, project, repo  # noqa: F401


def _stored(folder: Path, new: str, n: int = 1, skip: int = 0) -> list[MinedTask]:
    """Tasks of `folder` whose request's hash splits them `new`."""
    found = []
    for i in range(2000):
        intent = f"explain the {'abcdefghijklmnopqrstuvwxyz'[i % 26]}{i // 26 * 'x'} module"
        tid = task_id(str(folder), shape_of(intent))
        if split_of(split_key(intent), **FRACTIONS) == new:
            found.append(MinedTask(tid, intent, str(folder), rubric="names the module",
                                   skill="project", source_sessions=[f"claude:s-{i}"],
                                   last_seen="2026-11-20"))  # fmt: skip
        if len(found) == n + skip:
            return found[skip:]
    raise AssertionError("pick more intents")


def _frozen(night) -> dict[str, list[str]]:
    data = json.loads((night.folder / "tasks.json").read_text())["skills"]["project"]
    return {split: [t["id"] for t in tasks] for split, tasks in data.items()}


async def test_an_old_archive_is_split_again_once_and_never_moves_a_trained_task_to_val(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
):
    """Fails on the old code: the task the old scheme trained on was held out."""
    trained, still = _stored(project, "val", n=2)
    [held] = _stored(project, "train")
    state = tmp_path / "state"
    TaskArchive(state / "tasks.json").merge([trained, held, still])  # as old nights wrote it
    old = state / "nights" / "sleep-2026-11-20"  # a night of the old scheme, finished
    old.mkdir(parents=True)
    (old / "night.json").write_text(json.dumps({"status": "finished", "project": str(project)}))
    frozen = {"train": [trained.to_dict()], "val": [held.to_dict(), still.to_dict()]}
    (old / "tasks.json").write_text(json.dumps({"skills": {"project": frozen}}))

    parts = _parts(project, "train", 1)
    night = _night(tmp_path, repo, project, _sessions(project, parts, "2026-11-30"), DAY)
    lines: list[str] = []
    night.on_line = lines.append
    result = await night.run()
    splits = _frozen(night)
    assert trained.id in splits["train"] and trained.id not in splits["val"]
    assert held.id in splits["train"] and still.id in splits["val"]
    saved = json.loads((night.folder / "night.json").read_text())["resplit"]
    assert saved["scheme"] == 2
    assert saved["moved"] == [{"task": held.id, "from": "val", "to": "train"}]
    assert saved["kept_old_split"] == [{"task": trained.id, "split": "train", "new": "val"}]
    assert result.resplit == saved and any("split again" in line for line in lines)
    record = json.loads((state / "split-scheme.json").read_text())
    assert record["scheme"] == 2 and record["pinned"] == {trained.id: "train"}

    # the next night splits nothing again: a task stored since is the new scheme's
    [fresh] = _stored(project, "val", skip=2)  # no night replayed it: held out as hashed
    TaskArchive(state / "tasks.json").merge([fresh])
    later = _parts(project, "train", 1, skip=1)
    night = _night(
        tmp_path, repo, project, _sessions(project, later, "2026-12-01"), DAY + dt.timedelta(1)
    )
    result = await night.run()
    assert (
        result.resplit == {}
        and json.loads((night.folder / "night.json").read_text())["resplit"] == {}
    )
    splits = _frozen(night)
    assert trained.id in splits["train"] and held.id in splits["train"]
    assert fresh.id in splits["val"]
    assert json.loads((state / "split-scheme.json").read_text()) == record


def test_a_preference_never_holds_out_a_task_pinned_to_train():
    """The newest occurrence of a preference is held out when the hash held out none,
    unless an earlier night trained on it (pinned to train): then the next newest."""
    older, newest = _ids("train", 2)
    tasks = [_corrected(older, "2026-11-01"), _corrected(newest, "2026-11-05")]
    splits = night_splits(tasks, max_tasks=10, **FRACTIONS, pinned={newest: "train"})
    assert [t.id for t in splits["val"]] == [older]


def test_a_damaged_record_is_one_line_that_says_what_to_do(tmp_path):
    (tmp_path / "split-scheme.json").write_text('{"scheme": 2, "pinned": {"t-1": "shelf"}}')
    with pytest.raises(UserError, match="restore it from a backup"):
        pinned_splits(tmp_path)
