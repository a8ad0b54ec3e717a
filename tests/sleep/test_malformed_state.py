"""State files that parse as JSON but are not what Sleep wrote: the cursors
(harvest-state.json), the mined-task archive (tasks.json) and a night's frozen task. Each
is one line naming the file and what to do, exit 2, nothing on disk changed. Before,
harvest-state.json of `[]` re-harvested everything as if no night had run, an archive of
`{"tasks": {}}` was read as empty, and a malformed frozen task was a TypeError traceback
mid-night (after night.json had been rewritten). The commands run in the test's process
(World.call); test_hostile_state.py runs each of them as a real process too."""

from __future__ import annotations

import json

import pytest

from core.errors import UserError
from sleep.harvest.cursors import Cursor, HarvestState
from sleep.mine.tasks import Check, MalformedTask, MinedTask, TaskArchive, Turn
from tests.sleep.cli_world import one_line_error
from tests.sleep.test_hostile_state import _tonight, commands, snapshot, world  # noqa: F401

STATE_FILES = {
    "cursors-a-list": ("harvest-state.json", "[]"),
    "cursors-a-number": ("harvest-state.json", "3"),
    "cursors-no-version": ("harvest-state.json", json.dumps({"cursors": {}})),
    "cursors-not-objects": ("harvest-state.json", json.dumps({"version": 1, "cursors": {"k": 3}})),
    "cursors-bad-fields": (
        "harvest-state.json",
        json.dumps({"version": 1, "cursors": {"k": {"path": "x"}}}),
    ),
    "cursors-uuids-a-number": ("harvest-state.json", json.dumps({"version": 1, "claude_uuids": 3})),
    "archive-a-list": ("tasks.json", "[]"),
    "archive-not-objects": ("tasks.json", json.dumps({"tasks": [3]})),
    "archive-tasks-an-object": ("tasks.json", json.dumps({"tasks": {}})),
    "archive-bad-task": ("tasks.json", json.dumps({"tasks": [{"id": "t-1", "checks": [3]}]})),
}
ADVICE = {"harvest-state.json": "delete it", "tasks.json": "delete it"}
# Each command on each state file it reads (a few shapes each: the rest are unit tests).
CLI_CASES = [
    ("cursors-a-list", "harvest"),
    ("cursors-a-list", "dry-run"),
    ("cursors-a-list", "run"),
    ("cursors-bad-fields", "harvest"),
    ("cursors-no-version", "run"),
    ("archive-a-list", "dry-run"),
    ("archive-not-objects", "run"),
    ("archive-tasks-an-object", "run"),
]


@pytest.mark.parametrize(("case", "command"), CLI_CASES)
def test_a_malformed_state_file_is_one_line_and_changes_nothing(world, case, command):  # noqa: F811
    name, text = STATE_FILES[case]
    (world.state / name).write_text(text)
    before = snapshot(world.root)
    out = world.call(*commands(world)[command])
    error = one_line_error(out)
    assert str(world.state / name) in error and ADVICE[name] in error
    assert snapshot(world.root) == before


@pytest.mark.parametrize("case", sorted(STATE_FILES))
def test_every_malformed_shape_is_refused_by_its_reader(tmp_path, case):
    name, text = STATE_FILES[case]
    path = tmp_path / name
    path.write_text(text)
    load = HarvestState.load if name == "harvest-state.json" else TaskArchive(path).load
    with pytest.raises(UserError) as refused:
        load(path) if name == "harvest-state.json" else load()
    message = str(refused.value)
    assert str(path) in message and "delete it" in message and "\n" not in message


def test_the_state_a_harvest_writes_still_loads(tmp_path):
    path = tmp_path / "harvest-state.json"
    state = HarvestState(
        cursors={"k": Cursor("p", 1, 2, 3, "h", "t", True, {"session_id": "s"})},
        claude_uuids={"u"},
        codex_prompt_keys={"x": ["k1"]},
    )
    state.save(path)
    assert HarvestState.load(path) == state
    task = MinedTask(id="t-1", intent="fix it", project=None, checks=[Check("contains", "x")],
                     context=[Turn("before", "ok")], source_sessions=["claude:s"])  # fmt: skip
    TaskArchive(tmp_path / "tasks.json").merge([task])
    assert TaskArchive(tmp_path / "tasks.json").load() == {"t-1": task}


BAD_TASKS = [
    {"id": "t-1"},  # no intent, no project
    {"id": "t-1", "intent": "x", "project": None, "checks": [3]},
    {"id": "t-1", "intent": "x", "project": None, "colour": "red"},
    {"id": "t-1", "intent": "x", "project": None, "context": "not a list"},
    {"id": "t-1", "intent": "x", "project": None, "occurrences": "2"},
    3,
]


@pytest.mark.parametrize("task", BAD_TASKS)
def test_a_malformed_task_is_a_malformed_task_error_not_a_type_error(task):
    with pytest.raises(MalformedTask, match="task|object"):
        MinedTask.from_dict(task)


@pytest.mark.parametrize(("task", "command"), [(BAD_TASKS[0], "run"), (BAD_TASKS[1], "dry-run")])
def test_a_malformed_frozen_task_is_one_line_and_changes_nothing(world, task, command):  # noqa: F811
    folder = _tonight(world)
    (folder / "night.json").write_text(
        json.dumps({"night_id": folder.name, "status": "waiting", "skills": {}})
    )
    (folder / "sessions.json").write_text(json.dumps({"sessions": []}))
    (folder / "tasks.json").write_text(json.dumps({"skills": {"proj": {"train": [task]}}}))
    before = snapshot(world.root)
    out = world.call(*commands(world)[command])
    error = one_line_error(out)
    assert str(folder / "tasks.json") in error and "move it aside" in error
    assert snapshot(world.root) == before
