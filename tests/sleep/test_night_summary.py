"""What a night tells the person beyond night.json (tests fail on the old code): a skill
skipped for want of held-out tasks is said on the console, in the night's message and in
`sleep status`; an analyst edit that did not land is in the night's summary. (A waiting
handoff round repeating no unchanged scores: tests/sleep/test_night.py's round trip.)"""

from __future__ import annotations

import json

from core.skills_repo import SkillsRepo
from skillopt_tui.cli.sleep_night_cmds import status_cmd
from tests.sleep.night_double_missing import MISSING
from tests.sleep.test_night import SKILL_TEXT, make_night, night_config


def world(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("project", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    return repo, project


async def test_a_night_with_no_held_out_tasks_says_so_on_console_message_and_status(
    tmp_path, capsys
):
    repo, project = world(tmp_path)
    lines: list[str] = []
    night = make_night(tmp_path, repo, project, val_fraction=0.0, on_line=lines.append)
    result = await night.run()
    outcome = result.skills["project"]
    assert (outcome["status"], outcome["val"]) == ("skipped", 0)
    reason = outcome["reason"]
    assert reason.startswith("too few tasks to learn and gate") and "0 val" in reason
    assert f"project: skipped, {reason}" in lines
    # the night's one-line summary names it (it said "no candidate ..." before)
    assert result.message == f"nothing staged; project: {reason}"
    status_cmd(state_dir=tmp_path / "state", as_json=False)
    assert f"  project: {reason}" in capsys.readouterr().out


async def test_an_edit_whose_target_is_not_in_the_skill_is_in_the_summary(tmp_path, capsys):
    repo, project = world(tmp_path)
    config = night_config(tmp_path)
    for role in ("target", "optimizer", "judge", "miner"):
        getattr(config.models, role).model = "tests.sleep.night_double_missing:brain"
    lines: list[str] = []
    night = make_night(tmp_path, repo, project, config=config, on_line=lines.append)
    result = await night.run()
    assert result.status == "finished", result.message
    [edit] = result.skills["project"]["edits_not_landed"]
    assert (edit["op"], edit["status"]) == ("replace", "target_not_found")
    assert MISSING in edit["reason"]
    [line] = [x for x in lines if "did not land" in x]
    assert line.startswith("project: 1 edit(s) did not land — replace: ") and MISSING in line
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["skills"]["project"]["edits_not_landed"] == [edit]
    status_cmd(state_dir=tmp_path / "state", as_json=False)
    assert f"  {line}" in capsys.readouterr().out
