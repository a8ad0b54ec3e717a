"""Where the output of a night started from the TUI goes: a real `skillopt sleep run` child
(on a state directory without `sleep init`, so it ends at once with its one-line error)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from skillopt_tui.app.night_launcher import LOG_FILE, NightLauncher

REPO = Path(__file__).resolve().parents[3]


def test_the_log_is_in_the_state_dir_and_each_window_reads_its_own_night(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # where a temporary log would go
    state = tmp_path / "state"
    state.mkdir()
    earlier = "skillopt: sleep: night sleep-2026-01-01-1, 1 session\n"
    (state / LOG_FILE).write_text(earlier)  # an earlier night's output, kept

    launcher = NightLauncher()
    assert launcher.start(state).wait(timeout=120) == 2

    assert launcher.log_path == state / LOG_FILE
    assert list(tmp.iterdir()) == []  # nothing left behind outside the state directory
    [said] = launcher.lines()
    assert said.startswith("skillopt: error: no skills repository")
    assert launcher.night_id() is None  # not the earlier night's
    assert (state / LOG_FILE).read_text().startswith(earlier)
