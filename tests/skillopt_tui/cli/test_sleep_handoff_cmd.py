"""`skillopt sleep handoff` (issue 19): the waiting prompts of tonight's handoff night with
their role, kind, expected answer and how to check one; answers already written checked as
the night will read them, without running it; a rejected answer makes the next `sleep run`
wait again (exit 3) with the reason on the console, never fail."""

from __future__ import annotations

import json

import pytest

from core.models.handoff import HandoffWaiting
from tests.skillopt_tui.cli.test_sleep_night_cmds import run, world  # noqa: F401
from tests.sleep.test_handoff_workspace import Setup
from tests.support.skills_git import plain_git as git
from tests.support.sleep_settings import lower_min_val_tasks


def snapshot(folder) -> dict:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_handoff_lists_checks_and_a_rejected_answer_waits_again(world):  # noqa: F811
    env, project = world["env"], world["project"]
    assert run(env, "sleep", "init", "--project", str(project), "--yes").returncode == 0
    state = world["tmp"] / "xdg" / "skillopt" / "sleep"
    lower_min_val_tasks(state)  # the world's few sessions give three held-out tasks
    night = run(env, "sleep", "run")
    assert night.returncode == 3, night.stderr
    [folder] = [p / "handoff" for p in (state / "nights").iterdir()]
    listed = run(env, "sleep", "handoff", "--json")
    assert listed.returncode == 0, listed.stderr
    prompts = json.loads(listed.stdout)["prompts"]
    names = sorted(p.name for p in (folder / "prompts").iterdir())
    assert [p["file"] for p in prompts] == names and len(names) >= 3
    for p in prompts:
        assert p["check"] == "waiting" and p["role"] == "target" and p["kind"] == "target"
        assert (
            p["expects"].startswith("free text") and "skillopt sleep handoff" in p["how_to_check"]
        )
        assert p["answer"] == str(folder / "answers" / p["file"])

    good, binary, blank = names[:3]
    (folder / "answers" / good).write_text("Run `pnpm install`.")
    (folder / "answers" / binary).write_bytes(b"\x00\x89PNG")
    (folder / "answers" / blank).write_text("  \n")
    before = snapshot(state)
    checked = run(env, "sleep", "handoff")
    assert checked.returncode == 0, checked.stderr
    assert snapshot(state) == before  # a check writes nothing
    lines = {n: next(line for line in checked.stdout.splitlines() if n in line) for n in names[:3]}
    assert lines[good].split()[0] == "ok"
    assert lines[binary].split()[0] == "rejected" and "binary" in lines[binary]
    assert lines[blank].split()[0] == "waiting" and "empty" in lines[blank]

    again = run(env, "sleep", "run")
    assert again.returncode == 3, again.stderr  # waiting again, never failed
    assert f"{binary} (target): rejected: the answer file is binary" in again.stdout
    status = json.loads((folder.parent / "night.json").read_text())["status"]
    assert status == "waiting"


def test_handoff_without_a_night_is_a_one_line_error(world):  # noqa: F811
    out = run(world["env"], "sleep", "handoff")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "no night" in out.stderr


def test_handoff_says_a_workspace_answer_is_the_final_message_and_the_edits(tmp_path, world):  # noqa: F811
    """Issue 21: a replay-workspace prompt (written by the real runner on a real git
    project) is listed with its role and kind, and what its answer is."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    setup = Setup(tmp_path, project)
    with pytest.raises(HandoffWaiting):
        setup.run()
    listed = run(world["env"], "sleep", "handoff", "--dir", str(setup.handoff), "--json")
    assert listed.returncode == 0, listed.stderr
    [prompt] = json.loads(listed.stdout)["prompts"]
    assert (prompt["role"], prompt["kind"], prompt["check"]) == (
        "target",
        "replay-workspace",
        "waiting",
    )
    out = run(world["env"], "sleep", "handoff", "--dir", str(setup.handoff))
    assert out.returncode == 0, out.stderr
    assert f"waiting   {prompt['file']} (replay-workspace): no answer yet" in out.stdout
    assert "expects free text: the final message" in out.stdout
    assert "the edits left in that workspace are read with it" in out.stdout


def test_a_finished_nights_prompts_wait_for_nothing(world):  # noqa: F811
    """A strong-model night found `sleep status` saying "1 handoff answer(s) waiting" and
    `sleep handoff` listing a prompt after the night had finished (its workspace gone, a
    re-run starting a new night)."""
    env, project = world["env"], world["project"]
    assert run(env, "sleep", "init", "--project", str(project), "--yes").returncode == 0
    state = world["tmp"] / "xdg" / "skillopt" / "sleep"
    lower_min_val_tasks(state)  # the world's few sessions give fewer than six held-out tasks
    assert run(env, "sleep", "run").returncode == 3
    [night] = (state / "nights").iterdir()
    data = json.loads((night / "night.json").read_text())
    (night / "night.json").write_text(json.dumps({**data, "status": "finished"}))
    listed = run(env, "sleep", "handoff", "--json")
    assert listed.returncode == 0, listed.stderr
    assert (
        json.loads(listed.stdout)["prompts"] == [] and json.loads(listed.stdout)["night_finished"]
    )
    assert "nothing is waiting" in run(env, "sleep", "handoff").stdout
    status = json.loads(run(env, "sleep", "status", "--json").stdout)
    [recent] = status["nights"]
    assert recent["status"] == "finished" and recent["pending"] == 0
