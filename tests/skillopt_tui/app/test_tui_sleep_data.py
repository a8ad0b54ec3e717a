"""What the Sleep screen reads, on real Sleep state (a night run on the scripted TEST
DOUBLE): a night in progress shows its live run, replayed tasks are counted from the run's
events, and `skillopt tui` finds the state directory and the recorded skills repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from skillopt_tui.app.sleep_data import load_nights, replayed_tasks
from skillopt_tui.cli.tui_cmd import resolve_state_dir, sleep_skills_repo
from tests.support.sleep_world import make_world, run_night

SKILLOPT = Path(__file__).resolve().parents[3] / ".venv" / "bin" / "skillopt"


@pytest.fixture
def world(tmp_path):
    built = make_world(tmp_path)
    run_night(built)
    return built


def test_a_night_in_progress_shows_its_live_run(world):
    folder = world.state / "nights" / "sleep-2026-11-30"
    night = json.loads((folder / "night.json").read_text())
    # night.json as the night writes it while the skill's run is going on
    night.update(status="running", skills={})
    (folder / "night.json").write_text(json.dumps(night))
    [view] = load_nights(world.state)
    [skill] = view.skills
    frozen = json.loads((folder / "tasks.json").read_text())["skills"]["notes-app"]
    assert (skill.skill, skill.status, skill.run_dir) == ("notes-app", "live", folder / "notes-app")
    assert skill.counts == {split: len(frozen[split]) for split in ("train", "val", "test")}
    assert skill.staged is None


def test_replayed_tasks_are_distinct_items_and_a_line_being_written_is_ignored(world):
    run_dir = world.state / "nights" / "sleep-2026-11-30" / "notes-app"
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    items = {e["item_id"] for e in events if e["type"] == "RolloutFinished"}
    assert replayed_tasks(run_dir) == len(items) > 0
    with (run_dir / "events.jsonl").open("a") as f:
        f.write('{"type": "RolloutFinished", "item_id": "t-new')  # no newline yet
    assert replayed_tasks(run_dir) == len(items)
    assert replayed_tasks(run_dir.parent / "no-run") is None


def test_tui_uses_the_recorded_skills_repo_and_the_default_state_dir(world, monkeypatch, tmp_path):
    assert sleep_skills_repo(world.state) == world.skills
    assert sleep_skills_repo(tmp_path / "nothing") is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "sleep.yaml").write_text("max_tasks: many\n")
    assert sleep_skills_repo(tmp_path / "bad") is None  # the screen says why, not the CLI
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert resolve_state_dir(None) == tmp_path / "xdg" / "skillopt" / "sleep"
    assert resolve_state_dir(world.state) == world.state


def test_a_state_dir_that_is_a_file_is_a_one_line_error(tmp_path):
    file = tmp_path / "state"
    file.write_text("")
    result = subprocess.run(
        [str(SKILLOPT), "tui", "--state-dir", str(file)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "not a directory" in result.stderr


def test_a_skills_command_checks_are_shown_beside_its_scores(world):
    from skillopt_tui.app.widgets.sleep_rows import NightRow, night_detail

    folder = world.state / "nights" / "sleep-2026-11-30"
    night = json.loads((folder / "night.json").read_text())
    [outcome] = night["skills"].values()
    outcome["checks"] = {"pass": 4, "fail": 2, "not-run": 1, "junk": "x"}  # as the night tallies
    (folder / "night.json").write_text(json.dumps(night))
    [view] = load_nights(world.state)
    [skill] = view.skills
    assert skill.checks == {"pass": 4, "fail": 2, "not-run": 1}
    shown = night_detail(NightRow("skill", view, skill)).plain
    assert "command checks: 4 passed, 2 failed, 1 not run" in shown
    outcome.pop("checks")  # a night without command checks shows no such line
    (folder / "night.json").write_text(json.dumps(night))
    [view] = load_nights(world.state)
    assert "command checks" not in night_detail(NightRow("skill", view, view.skills[0])).plain
