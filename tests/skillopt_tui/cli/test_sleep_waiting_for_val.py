"""A night waiting for more held-out tasks says so where a person looks: the console's
line per skill, `sleep status`, and the TUI's Sleep screen (its nights table's detail).
On a real night of the scripted TEST DOUBLE (tests/sleep/test_held_out.py)."""

from __future__ import annotations

from skillopt_tui.app.sleep_data import load_nights
from skillopt_tui.app.widgets.sleep_rows import night_detail, night_rows
from skillopt_tui.cli.sleep_night_cmds import _outcome_line, status_cmd
from tests.sleep.test_held_out import waiting_night
from tests.sleep.test_night import project, repo  # noqa: F401

WAITING = "waiting for more held-out tasks (2 of 3)"


async def test_waiting_for_held_out_tasks_is_said_on_console_status_and_tui(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
    capsys,
):
    night = waiting_night(tmp_path, repo, project)
    result = await night.run()
    assert WAITING in _outcome_line("project", result.skills["project"])

    status_cmd(state_dir=tmp_path / "state", as_json=False)
    out = capsys.readouterr().out
    assert f"{night.night_id}: finished — nothing staged" in out
    assert f"  project: {WAITING}" in out

    [view] = load_nights(tmp_path / "state")
    refs, _cells = night_rows([view])
    night_row, skill_row = refs
    assert WAITING in night_detail(night_row).plain  # the night's message
    assert WAITING in night_detail(skill_row).plain  # the skill's reason
