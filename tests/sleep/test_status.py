"""`skillopt sleep status` says what became of the branches nights staged: read from the
skills repository each time, so a branch adopted and rolled back is no longer "staged"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from sleep.state.status import night_status
from tests.support.sleep_world import make_world, run_night

SKILLOPT = Path(sys.executable).parent / "skillopt"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return make_world(tmp_path)


def _status_line(world) -> str:
    env = {**os.environ, "HOME": str(world.home), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [str(SKILLOPT), "sleep", "status", "--state-dir", str(world.state)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return next(line for line in out.stdout.splitlines() if line.startswith("sleep-"))


def _state(world) -> str:
    [night] = night_status(world.state, crontab_text="")["nights"]
    [outcome] = night["skills"].values()
    return outcome["branch_state"]


def test_a_branch_adopted_then_rolled_back_is_no_longer_listed_as_staged(world):
    staged = run_night(world)["skills"]["notes-app"]["staged"]
    assert staged and _state(world) == "staged"
    assert _status_line(world).endswith(f"— {staged}")

    repo = SkillsRepo.open(world.skills)
    repo.adopt(staged)  # every hunk: archived as adopted/…
    assert _state(world) == "adopted"
    assert f"{staged} (adopted)" in _status_line(world)

    repo.rollback("notes-app")
    assert _state(world) == "rolled back"
    line = _status_line(world)
    assert f"{staged} (rolled back)" in line and not line.endswith(staged)


def test_a_rejected_branch_says_rejected(world):
    staged = run_night(world)["skills"]["notes-app"]["staged"]
    SkillsRepo.open(world.skills).reject(staged)
    assert _state(world) == "rejected"
    assert f"{staged} (rejected)" in _status_line(world)
