"""Issue 21: the `handoff-workspace` replay (sleep/night/handoff_workspace.py) on the real
handoff backend over a real git project. The person's agent is a TEST DOUBLE here: it
reads the workspace path out of the prompt file, edits files there, and writes the answer
file, as `/skillopt-handoff` would."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from core.models.handoff import AnswerRejected, HandoffBackend, HandoffWaiting
from core.models.handoff_files import HandoffFolder
from core.models.types import AgentTask, Request
from core.optimizer.handoff_check import check_folder
from sleep.night import handoff_answers  # noqa: F401 - registers itself when imported
from sleep.night.handoff_workspace import run_handoff_workspace
from sleep.night.replay_env import AgentReplay
from tests.support.project_tree import snapshot
from tests.support.skills_git import plain_git as git

SKILL = "# Notes app\n\nRun the tests before you finish.\n"
WORKSPACE_LINE = re.compile(r"^    (/\S+/work)$", re.MULTILINE)
KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0123456789"


def named_workspace(prompt: Path) -> Path:
    [path] = WORKSPACE_LINE.findall(prompt.read_text())
    return Path(path)


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "notes-app"
    root.mkdir()
    (root / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    (root / "app.py").write_text("def total(xs):\n    return 'uncommitted'\n")
    return root


class Setup:
    def __init__(self, tmp_path: Path, project: Path) -> None:
        self.handoff = tmp_path / "night" / "handoff"
        self.backend = HandoffBackend(self.handoff, role="target")
        commit = git(project, "rev-parse", "HEAD").strip()
        self.where = AgentReplay(project, commit, "notes-app", keep_in=self.handoff / "workspaces")
        self.task = AgentTask(
            prompt="add input validation to total()",
            files=project,
            skill_name="notes-app",
            check=lambda workspace: (workspace / "app.py").read_text(),
            commit=commit,
        )

    async def complete(self, messages, **_):
        return await self.backend.send(Request("handoff", "handoff", messages), timeout_s=5)

    def run(self, skill: str = SKILL):
        return asyncio.run(run_handoff_workspace(self.task, skill, self.complete, self.where))

    def waiting(self):
        return HandoffFolder(self.handoff).waiting()


def answer_in_workspace(status, message: str = "Validated the input of total().") -> Path:
    """The person's agent, as a TEST DOUBLE: edit the named workspace, write the answer."""
    workspace = named_workspace(status.prompt)
    app = workspace / "app.py"
    app.write_text(app.read_text() + "\ndef check(xs):\n    assert all(x >= 0 for x in xs)\n")
    (workspace / "NOTES.md").write_text("validated\n")
    status.answer.write_text(message)
    return workspace


def test_the_prompt_names_a_prepared_workspace_and_the_answer_carries_its_diff(tmp_path, project):
    setup = Setup(tmp_path, project)
    before, status_before = snapshot(project), git(project, "status", "--porcelain")
    with pytest.raises(HandoffWaiting):
        setup.run()
    [status] = setup.waiting()
    assert re.fullmatch(r"0001-replay-workspace-[0-9a-f]{16}\.md", status.prompt.name)
    text = status.prompt.read_text()
    workspace = named_workspace(status.prompt)
    assert workspace.parent.parent == setup.handoff / "workspaces"
    # the tree at the recorded commit (not the uncommitted change), the skill where the
    # agent reads it, no git directory inside for the answerer's agent to tamper with
    assert (workspace / "app.py").read_text() == "def total(xs):\n    return sum(xs)\n"
    assert (workspace / "CLAUDE.md").read_text() == SKILL
    assert not (workspace / ".git").exists()
    assert "add input validation to total()" in text and "----- system -----\n" + SKILL in text
    assert "final message" in text and "edits you left in the workspace" in text
    # what `skillopt sleep handoff` lists
    [listed] = [c.to_dict() for c in check_folder(setup.handoff)]
    assert (listed["role"], listed["kind"], listed["check"]) == (
        "target",
        "replay-workspace",
        "waiting",
    )
    assert "final message" in listed["expects"] and "edits" in listed["expects"]

    # a re-run before the answer: the same prompt, the same workspace, nothing new
    with pytest.raises(HandoffWaiting):
        setup.run()
    assert [s.prompt.name for s in setup.waiting()] == [status.prompt.name]
    assert len(list((setup.handoff / "workspaces").iterdir())) == 1

    answer_in_workspace(status, f"Validated total(). Deploy key {KEY}")
    (workspace / "secret.txt").write_text(f"token={KEY}\n")
    outcome = setup.run()
    assert outcome.text.startswith("Validated total().") and KEY not in outcome.text
    assert "+    assert all(x >= 0 for x in xs)" in outcome.diff
    assert "+validated" in outcome.diff and KEY not in outcome.diff
    assert "CLAUDE.md" not in outcome.diff  # the placed skill is the baseline
    assert "def check" in outcome.check  # the task's check ran in the workspace
    assert setup.waiting() == []
    assert snapshot(project) == before
    assert git(project, "status", "--porcelain") == status_before


def test_later_runs_judge_the_edits_as_they_were_when_the_answer_was_read(tmp_path, project):
    setup = Setup(tmp_path, project)
    with pytest.raises(HandoffWaiting):
        setup.run()
    [status] = setup.waiting()
    workspace = answer_in_workspace(status)
    first = setup.run().diff
    (workspace / "build.log").write_text("left by the task's check\n")
    assert setup.run().diff == first  # e.g. the judge's answer came one run later
    status.answer.write_text("Validated, and kept the build log.")
    assert "+left by the task's check" in setup.run().diff  # a new answer: read anew


def test_each_skill_version_gets_its_own_workspace_and_says_which(tmp_path, project):
    setup = Setup(tmp_path, project)
    candidate = SKILL + "Validate inputs at the boundary.\n"
    for skill in (SKILL, candidate, ""):
        with pytest.raises(HandoffWaiting):
            setup.run(skill)
    prompts = [s.prompt for s in setup.waiting()]
    workspaces = [named_workspace(p) for p in prompts]
    assert len(set(workspaces)) == 3 == len(list((setup.handoff / "workspaces").iterdir()))
    versions = [re.findall(r"skill version ([0-9a-f]{12})", p.read_text()) for p in prompts]
    assert versions[0] != versions[1] and all(versions[:2])
    assert (workspaces[1] / "CLAUDE.md").read_text() == candidate
    assert "no skill" in prompts[2].read_text() and not (workspaces[2] / "CLAUDE.md").exists()


def test_a_workspace_deleted_before_its_answer_is_prepared_again_and_asked_again(tmp_path, project):
    setup = Setup(tmp_path, project)
    with pytest.raises(HandoffWaiting):
        setup.run()
    [first] = setup.waiting()
    workspace = answer_in_workspace(first)
    shutil.rmtree(workspace.parent)  # the person cleaned up before the night read it

    with pytest.raises(HandoffWaiting, match="repair-1"):  # waiting for the repair prompt
        setup.run()
    statuses = {s.prompt.name: s for s in HandoffFolder(setup.handoff).statuses()}
    assert statuses[first.prompt.name].state == "rejected"
    assert "was deleted before the answer was read" in statuses[first.prompt.name].reason
    [repair] = [s for s in statuses.values() if s.info.repair_of == first.prompt.name]
    assert "replay-workspace-repair-1" in repair.prompt.name and repair.state == "waiting"
    # prepared again, at the same place, fresh: the lost edits are not there
    assert named_workspace(repair.prompt) == workspace
    assert "def check" not in (workspace / "app.py").read_text()
    assert "was deleted before this answer was read" in repair.prompt.read_text()

    # the stale answer stays unused on a re-run, however often
    with pytest.raises(HandoffWaiting):
        setup.run()
    answer_in_workspace(repair, "Redone: validated total().")
    outcome = setup.run()
    assert outcome.text == "Redone: validated total()." and "+validated" in outcome.diff
    assert setup.waiting() == []  # the repair's answer stands for the rejected one


def test_a_repair_answered_for_a_workspace_deleted_again_is_rejected_with_the_reason(
    tmp_path, project
):
    setup = Setup(tmp_path, project)
    with pytest.raises(HandoffWaiting):
        setup.run()
    [first] = setup.waiting()
    shutil.rmtree(answer_in_workspace(first).parent)
    with pytest.raises(HandoffWaiting):
        setup.run()
    [repair] = [s for s in setup.waiting() if s.info.repair_of]
    shutil.rmtree(answer_in_workspace(repair).parent)
    with pytest.raises(AnswerRejected, match="was deleted before the answer was read"):
        setup.run()
    # a rewritten answer to the first prompt, after redoing the task, is used
    workspace = answer_in_workspace(first, "Done again.")
    outcome = setup.run()
    assert outcome.text == "Done again." and outcome.workspace == str(workspace)
    assert setup.waiting() == []


def test_an_answer_that_is_a_symlink_is_refused_and_never_used(tmp_path, project):
    setup = Setup(tmp_path, project)
    with pytest.raises(HandoffWaiting):
        setup.run()
    [status] = setup.waiting()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("Done.")
    status.answer.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, status.answer)
    with pytest.raises(AnswerRejected, match="symbolic link"):
        setup.run()
    status.answer.unlink()
    status.answer.write_text("Done.")
    assert setup.run().text == "Done."
