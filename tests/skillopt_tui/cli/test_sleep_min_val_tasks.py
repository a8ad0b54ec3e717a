"""`min_val_tasks` in sleep.yaml (sleep/night/held_out.py): the recorded value reaches the night
`sleep run` builds, and a minimum no night could reach is one line naming both keys."""

from __future__ import annotations

import pytest

from core.errors import UserError
from skillopt_tui.cli.sleep_night_cmds import _night
from sleep.state.settings import load_settings, save_settings
from tests.support.sleep_world import make_world


def test_the_recorded_gate_minimum_reaches_the_night(tmp_path):
    world = make_world(tmp_path)
    save_settings(
        world.state, world.settings.model_copy(update={"min_val_tasks": 9, "max_val_tasks": 12})
    )
    settings = load_settings(world.state)
    night, _chosen = _night(world.state, settings, world.project, None, [], dry=True)
    assert (night.min_val_tasks, night.max_val_tasks) == (9, 12)


@pytest.mark.parametrize(
    ("text", "key"),
    [("min_val_tasks: 0", "min_val_tasks"), ("min_val_tasks: 31", "max_val_tasks")],
)
def test_a_gate_minimum_no_night_reaches_is_one_line(tmp_path, text, key):
    world = make_world(tmp_path)
    path = world.state / "sleep.yaml"
    path.write_text(path.read_text().replace("min_val_tasks: 2", text))
    with pytest.raises(UserError) as refused:
        load_settings(world.state)
    message = str(refused.value)
    assert key in message and "\n" not in message
