"""A second night whose candidate is identical to a staged branch names that branch
(sleep/night/staged_branch.py), on the preference gate's TEST DOUBLE night
(tests/sleep/test_preference_night.py) and a real skills repository."""

from __future__ import annotations

import datetime as dt
import re
import shlex

import tests.sleep.test_preference_night as preference_night
from tests.sleep.preference_double import PREFERENCE_RULE
from tests.sleep.test_preference_night import _cli, night_with, project, repo  # noqa: F401


async def test_a_second_night_with_the_same_candidate_names_the_branch_holding_it(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
    monkeypatch,
):
    """Fails on the old code: the second night said `staged/<its own run id>`, a branch
    never made (the stager reused the first night's), so status showed it "(gone)" and the
    printed `skills diff` command failed ("no staged branch")."""
    _n, first, _l = await night_with(tmp_path / "one", repo, project, "brain_rule")
    held = first.skills["project"]["staged"]
    monkeypatch.setattr(preference_night, "DAY", preference_night.DAY + dt.timedelta(days=1))
    _n, second, _l = await night_with(tmp_path / "two", repo, project, "brain_rule")
    assert second.night_id != first.night_id  # its own run id, its candidate already staged
    assert second.skills["project"]["staged"] == held
    assert [b.name for b in repo.staged_branches()] == [held]
    printed = re.search(r"`(skillopt skills diff [^`]+)`", second.message)
    assert printed, second.message
    shown = _cli(tmp_path, shlex.split(printed.group(1))[1:])
    assert shown.returncode == 0, shown.stderr
    assert PREFERENCE_RULE in shown.stdout
    status = _cli(tmp_path, ["sleep", "status", "--state-dir", str(tmp_path / "two" / "state")])
    assert status.returncode == 0, status.stderr
    assert f"staged {held}" in status.stdout and "(gone)" not in status.stdout, status.stdout
