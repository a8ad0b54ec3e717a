"""Did an adopted Sleep edit help (sleep/night/adoption_effect.py)? After the preference
night of tests/sleep/test_preference_night.py is adopted, later sessions are read for the
preference it addressed: `sleep status` counts its corrections before and after the
adoption, and flags one corrected again, with the rollback command, which works as shown.
Fails on the old code: nothing read the sessions after an adoption."""

from __future__ import annotations

import datetime as dt
import json

from sleep.mine.tasks import Correction, MinedTask, TaskArchive, task_id
from sleep.night.held_tasks import Harvested, freeze
from tests.sleep.test_preference_night import (  # noqa: F401
    CORRECTION,
    PREFERENCE,
    _cli,
    night_with,
    project,
    repo,
)

LINE = "no, use logging instead of print: corrected 4× in 4 sessions before adoption, "


def later_session(folder, n: int, at: dt.datetime) -> dict:
    stamp = at.isoformat().replace("+00:00", "Z")
    return {
        "source": "claude", "session_id": f"later-{n}", "cwd": str(folder), "branch": "main",
        "file": f"/x/later-{n}.jsonl", "automation": False,
        "tasks": [{"text": f"rename the helper in module {n}", "timestamp": stamp,
                   "aborted": False}],
    }  # fmt: skip


def status(tmp_path) -> tuple[str, dict]:
    args = ["sleep", "status", "--state-dir", str(tmp_path / "state")]
    text = _cli(tmp_path, [*args])
    as_json = _cli(tmp_path, [*args, "--json"])
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    return text.stdout, json.loads(as_json.stdout)


async def adopted_night(tmp_path, repo, project) -> dt.datetime:  # noqa: F811
    """The preference night staged and adopted (`sleep.yaml` names the skills
    repository); returns when it was adopted."""
    _night, result, _lines = await night_with(tmp_path, repo, project, "brain_rule")
    branch = result.skills["project"]["staged"]
    (tmp_path / "state" / "sleep.yaml").write_text(f"skills_repo: {repo.path}\n")
    repo.adopt(branch)
    [adoption] = [e for e in repo.log() if e.kind == "adopt"]
    return dt.datetime.fromisoformat(adoption.date_iso)


def corrected_again(tmp_path, folder, adopted: dt.datetime, n: int) -> None:
    """Session `later-n`, after the adoption, where the person corrects it again."""
    when = adopted + dt.timedelta(hours=n)
    freeze(tmp_path / "state" / "nights" / f"sleep-2099-01-0{n}", Harvested(
        [later_session(folder, n, when)]))  # fmt: skip
    stamp = when.isoformat().replace("+00:00", "Z")
    again = MinedTask(
        id=task_id(str(folder), "add a debug message when the mail module starts"),
        intent="add a debug message when the mail module starts", project=str(folder),
        skill="project", source_sessions=[f"claude:later-{n}"], first_seen=stamp,
        corrections=[Correction(CORRECTION, f"claude:later-{n}", "claude", stamp)],
        preference=PREFERENCE,
    )  # fmt: skip
    TaskArchive(tmp_path / "state" / "tasks.json").merge([again])


async def test_sessions_after_adoption_are_read_for_the_preference(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
):
    adopted = await adopted_night(tmp_path, repo, project)

    # two later sessions, the person no longer corrects it
    later = [later_session(project, n, adopted + dt.timedelta(hours=n)) for n in (1, 2)]
    freeze(tmp_path / "state" / "nights" / "sleep-2099-01-00", Harvested(later))
    text, data = status(tmp_path)
    assert f"  project: {LINE}0× in 2 sessions after" in text, text
    [effect] = data["adoption_effects"]
    assert (effect["corrected_before"], effect["corrected_after"]) == (4, 0)
    assert effect["corrected_again"] is False and "corrected again" not in text

    # a third session where it is corrected again: flagged, with the rollback command
    corrected_again(tmp_path, project, adopted, 3)
    text, data = status(tmp_path)
    assert f"  project: {LINE}1× in 3 sessions after — corrected again since adoption" in text
    [effect] = data["adoption_effects"]
    assert effect["corrected_again"] is True
    undo = _cli(tmp_path, effect["rollback"].split()[1:])  # as shown (paths without spaces)
    assert undo.returncode == 0, undo.stderr
    text, data = status(tmp_path)
    assert data["adoption_effects"] == []  # rolled back: no longer adopted
