"""The person's preferences can be seen after the night (sleep/night/known_preferences.py):
in night.json, in a dry run with no new sessions, and in `sleep status`. On the
greenhouse night (issue 37, round 6) night.json had no list, `sleep status` showed none
and `dry-run --json` after the night said `preferences: []`."""

from __future__ import annotations

import datetime as dt
import json

from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import Correction, MinedTask
from sleep.night.held_tasks import Harvested
from sleep.night.known_preferences import preference_line
from sleep.night.run import Night
from tests.sleep.test_adoption_effect import status
from tests.sleep.test_preference_night import (  # noqa: F401
    CORRECTION,
    DAY,
    night_config,
    night_with,
    project,
    repo,
)


def _logging(preferences: list[dict]) -> dict:
    [found] = [p for p in preferences if p["text"] == CORRECTION]
    return found


async def test_preferences_are_shown_after_the_night(tmp_path, repo, project):  # noqa: F811
    """Fails on the old code: night.json had no preferences, a dry run with no new
    sessions listed none, and `sleep status` showed none."""
    night, _result, _lines = await night_with(tmp_path, repo, project, "brain_rule")
    saved = json.loads((night.folder / "night.json").read_text())
    said = _logging(saved["preferences"])
    assert said["name"] == CORRECTION and said["project"] == str(project)
    assert [o["agent"] for o in said["occurrences"]] == ["claude", "codex", "claude", "codex"]
    assert all({"task", "session", "agent", "date"} <= set(o) for o in said["occurrences"])

    later = Night(
        state_dir=tmp_path / "state", repo=repo, config=night_config("x:y"), project=project,
        harvest=lambda _freeze: Harvested([]), today=DAY + dt.timedelta(days=1), dry=True,
    )  # fmt: skip
    plan = await later.plan()
    assert plan.sessions == 0
    assert _logging(plan.preferences) == said

    text, as_json = status(tmp_path)
    assert _logging(as_json["preferences"]) == said
    assert f'"{CORRECTION}": said 4x in 4 session(s) (claude, codex, 2026-11-10 to' in text, text


def test_no_archive_no_preferences(tmp_path):
    from sleep.night.known_preferences import preferences_of_projects

    assert preferences_of_projects(tmp_path, []) == []


def test_one_message_on_two_tasks_is_said_once():
    """Fails on the old code: a message that corrects one task and states the need up
    front for the next counted as two times said ("said 5x in 4 session(s)", issue 37)."""
    message = "thx. tests with every change pls. next: add heat_stress(temp, humidity)"
    when, need = "2026-12-01T10:00:00Z", ("a test with every change",)  # as the miner named it
    tasks = [
        MinedTask("alert", "add alert_line()", "/p", rubric="add a test",
                  corrections=[Correction(message, "s1", "claude", when, need)]),
        MinedTask("heat", "add heat_stress(temp, humidity)", "/p", rubric="add a test",
                  corrections=[Correction("tests with every change", "s1", "claude", when, need)]),
        MinedTask("daily", "add daily_max()", "/p", rubric="add a test",
                  corrections=[Correction("add tests with every change", "s2", "codex",
                                          "2026-12-02T10:00:00Z", need)]),
    ]  # fmt: skip
    [pref] = [p for p in group_preferences(tasks) if len(p.occurrences) == 3]
    assert [o.task for o in pref.occurrences] == ["alert", "heat", "daily"]  # both held out
    assert pref.times_said == 2
    assert ": said 2x in 2 session(s) (claude, codex" in preference_line(pref.to_dict())


def test_the_preferences_of_several_projects_read_the_archive_once(tmp_path, monkeypatch):
    """Fails on the old code: `sleep status` and the TUI read the whole archive again
    for each recorded project."""
    from sleep.mine.tasks import TaskArchive
    from sleep.night.known_preferences import preferences_of_projects

    when = "2026-12-01T10:00:00Z"
    tasks = [
        MinedTask(f"t{i}", f"add thing {i}", folder, rubric="add a test",
                  corrections=[Correction("tests with every change pls", f"s{i}", "claude", when)])
        for i, folder in enumerate(["/a", "/a/sub", "/b"])
    ]  # fmt: skip
    TaskArchive(tmp_path / "tasks.json").merge(tasks)
    reads: list[int] = []
    load = TaskArchive.load

    def counted(self):
        reads.append(1)
        return load(self)

    monkeypatch.setattr(TaskArchive, "load", counted)
    found = preferences_of_projects(tmp_path, ["/a", "/b"])
    assert [(p["project"], len(p["occurrences"])) for p in found] == [("/a", 2), ("/b", 1)]
    assert len(reads) == 1
