"""The Sleep screen lists what the person keeps correcting, read from the task archive
after the night (sleep/night/known_preferences.py): the preference night of
tests/sleep/test_preference_night.py, four logging corrections in four sessions."""

from __future__ import annotations

from textual.widgets import Static

from skillopt_tui.app.app import SkillOptApp
from tests.skillopt_tui.app.test_tui_sleep import _open_sleep
from tests.sleep.test_preference_night import CORRECTION, night_with, project, repo  # noqa: F401
from tests.support.tui_app import wait_until


async def test_the_sleep_screen_lists_the_preferences(tmp_path, repo, project, monkeypatch):  # noqa: F811
    """Fails on the old code: the screen showed no preferences."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    await night_with(tmp_path, repo, project, "brain_rule")
    app = SkillOptApp(tmp_path / "runs", repo.path, refresh_runs=False, poll_interval=0.05,
                      state_dir=tmp_path / "state")  # fmt: skip
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open_sleep(pilot)
        widget = screen.query_one("#preferences", Static)
        assert await wait_until(pilot, lambda: "Preferences" in str(widget.render()))
        shown = " ".join(str(widget.render()).split())
        assert f'"{CORRECTION}": said 4x in 4 session(s) (claude, codex' in shown, shown
