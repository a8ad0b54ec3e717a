"""The empty home's hint is a command `skillopt train` accepts, shown whole (it named a
--runs-dir that train does not have, and was cut at the screen's edge)."""

from __future__ import annotations

from textual.widgets import Label

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.cli.main import _root_command
from tests.support.tui_app import wait_until


async def test_the_empty_home_suggests_a_train_command_that_exists(tmp_path):
    runs = tmp_path / "a-rather-long-folder-name-for-runs" / "runs"
    runs.mkdir(parents=True)
    app = SkillOptApp(runs, None, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, HomeScreen)
            and app.screen.query_one("#runs-empty", Label).display,
        )
        label = app.screen.query_one("#runs-empty", Label)
        hint = str(label.render())
        command = hint[hint.index("`") + 1 : hint.rindex("`")].split()
        assert command[:2] == ["skillopt", "train"]
        options = {
            name
            for param in _train_params()
            for name in getattr(param, "opts", [])
        }
        flags = [word for word in command if word.startswith("--")]
        assert flags and set(flags) <= options, f"{flags} not in train's options"
        assert label.region.height >= 2  # wrapped, not cut at 100 columns
        assert label.region.width <= 100


def _train_params():
    return _root_command().commands["train"].params
