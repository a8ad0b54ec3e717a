"""A changed setting acts without waiting for new sessions: `--set sleep.<key>=…` for one
night (sleep/settings.with_sets), and a night with no new sessions gates again the stored
tasks whose split or gate settings changed since a night last ran them."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from core.errors import UserError
from sleep.night.held_tasks import Harvested
from sleep.night.run import BY_STORED, Night
from sleep.state.settings import SleepSettings, load_settings, with_sets
from tests.sleep.cli_world import make_world, one_line_error
from tests.sleep.test_held_out import waiting_night
from tests.sleep.test_night import DAY, night_config, project, repo  # noqa: F401


def test_sleep_sets_apply_for_one_night_and_the_rest_go_to_the_config():
    settings, rest = with_sets(
        SleepSettings(), ["sleep.min_val_tasks=2", "train.epochs=1", "sleep.pass_mark=0.8"]
    )
    assert (settings.min_val_tasks, settings.pass_mark, rest) == (2, 0.8, ["train.epochs=1"])
    with pytest.raises(UserError, match="sleep has no setting 'nope'"):
        with_sets(SleepSettings(), ["sleep.nope=1"])
    with pytest.raises(UserError, match="--set sleep.min_val_tasks: "):
        with_sets(SleepSettings(), ["sleep.min_val_tasks=0"])


def test_dry_run_and_run_take_a_sleep_setting_for_one_night(tmp_path):
    """Fails on the old code: every --set went to the run config: "unknown key 'sleep'"."""
    world = make_world(tmp_path)
    assert world.call("sleep", "init", "--project", str(world.project), "--yes").returncode == 0
    dry = world.call("sleep", "dry-run", "--json", "--set", "sleep.min_val_tasks=1")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["sessions"] == 2
    assert load_settings(world.state).min_val_tasks == 3  # for this night only: not saved
    assert "no setting 'nope'" in one_line_error(
        world.call("sleep", "dry-run", "--set", "sleep.nope=1")
    )


def _quiet_night(tmp_path, repo, project, today, **kw) -> Night:  # noqa: F811
    """A night of no new sessions."""
    return Night(state_dir=tmp_path / "state", repo=repo, config=night_config(tmp_path),
                 harvest=lambda _freeze: Harvested([]), project=project, today=today,
                 **kw)  # fmt: skip


async def test_a_night_without_sessions_gates_stored_tasks_whose_settings_changed(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
):
    """Fails on the old code: with no new sessions a night said "nothing to learn from"
    and never gated the stored tasks, so lowering min_val_tasks changed nothing."""
    waited = await waiting_night(tmp_path, repo, project).run()  # 2 held out of 3 needed
    assert waited.skills["project"]["status"] == "skipped"
    same = await _quiet_night(tmp_path, repo, project, DAY + dt.timedelta(1)).run()
    assert same.skills == {} and "nothing to learn from" in same.message  # nothing changed
    lowered = await _quiet_night(
        tmp_path, repo, project, DAY + dt.timedelta(2), min_val_tasks=2
    ).run()
    outcome = lowered.skills["project"]
    assert outcome["routed_by"] == BY_STORED
    assert (outcome["train"], outcome["val"]) == (2, 2)
    assert outcome["staged"] is not None, lowered.message
    again = await _quiet_night(
        tmp_path, repo, project, DAY + dt.timedelta(3), min_val_tasks=2
    ).run()
    assert again.skills == {}  # gated on these already
