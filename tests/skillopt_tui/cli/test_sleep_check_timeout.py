"""`check_timeout_s` in sleep.yaml bounds each mined command check of a night
(sleep/night/replay_checks.py): the recorded value reaches the night `sleep run` builds, and a
value that is not a positive number of seconds is one line naming the key."""

from __future__ import annotations

import pytest

from core.errors import UserError
from skillopt_tui.cli.sleep_night_cmds import _night
from sleep.state.settings import load_settings, save_settings
from tests.support.sleep_world import make_world


def test_the_recorded_check_timeout_reaches_the_night(tmp_path):
    world = make_world(tmp_path)
    assert world.settings.check_timeout_s == 120.0
    save_settings(world.state, world.settings.model_copy(update={"check_timeout_s": 30.0}))
    settings = load_settings(world.state)
    night, _chosen = _night(world.state, settings, world.project, None, [], dry=True)
    assert night.check_timeout_s == 30.0


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_bad_check_timeout_is_one_line_naming_the_key(tmp_path, value):
    world = make_world(tmp_path)
    path = world.state / "sleep.yaml"
    path.write_text(path.read_text().replace("check_timeout_s: 120.0", f"check_timeout_s: {value}"))
    with pytest.raises(UserError) as refused:
        load_settings(world.state)
    message = str(refused.value)
    assert "check_timeout_s" in message and "\n" not in message
