"""A handoff night replays its items again every round: an answered `handoff-workspace`
replay comes back with the same work, and its command check (run in the real jail over
the kept workspace) must not run again, nor be counted again — the strong-model night
reported `not-run: 16` for 8 replays. Kept in the night's checks log, so a re-run of the
night (a new environment over the same files) does not run it either. The person's agent
and the judge are TEST DOUBLES writing the real handoff answer files."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from core.models.handoff import HandoffBackend, HandoffWaiting
from core.models.handoff_files import HandoffFolder
from core.models.types import Request
from sleep import handoff_answers  # noqa: F401 - masks secrets in answers
from sleep import handoff_workspace  # noqa: F401 - registers the handoff-workspace runner
from sleep.replay_checks import tally
from sleep.replay_env import AgentReplay, ReplayEnvironment
from sleep.tasks import Check, MinedTask
from tests.support.jail import jail  # noqa: F401 - the fixture
from tests.support.skills_git import plain_git as git

SKILL = "# Notes app\n\nRun the tests before you finish.\n"
# Each run of the check leaves one line in the workspace: the runs are counted there.
COUNTING_CHECK = "echo ran >> check-runs.txt && grep -q validated NOTES.md"
WORKSPACE_LINE = re.compile(r"^    (/\S+/work)$", re.MULTILINE)


def project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "notes-app"
    root.mkdir()
    (root / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root, git(root, "rev-parse", "HEAD").strip()


class Night:
    def __init__(self, tmp_path: Path) -> None:
        self.handoff = tmp_path / "night" / "handoff"
        self.log = tmp_path / "night" / "checks" / "notes-app.jsonl"
        self.root, self.commit = project(tmp_path)
        self.task = MinedTask(
            id="t-validate",
            intent="add input validation to total()",
            project=str(self.root),
            kind="agentic",
            rubric="total() rejects negative numbers",
            checks=[Check("command", COUNTING_CHECK)],
        )

    def env(self) -> ReplayEnvironment:
        """A fresh environment over the night's files, as each run of the night builds."""
        judge = HandoffBackend(self.handoff, role="judge")

        async def ask_judge(messages, **_):
            return await judge.send(Request("handoff", "handoff", messages), timeout_s=5)

        where = AgentReplay(self.root, self.commit, "notes-app", keep_in=self.handoff / "workspaces")
        return ReplayEnvironment(
            {"val": [self.task]},
            ask_judge,
            target_backend="handoff",
            workspace=where,
            checks_log=self.log,
        )

    def round(self):
        env = self.env()
        [item] = env.load_split("val")
        target = HandoffBackend(self.handoff, role="target")

        async def complete(messages, **_):
            return await target.send(Request("handoff", "handoff", messages), timeout_s=5)

        return asyncio.run(env.rollout(item, SKILL, complete))

    def waiting(self):
        return HandoffFolder(self.handoff).waiting()


@pytest.mark.usefixtures("jail")
def test_a_replay_brought_back_by_later_rounds_runs_and_counts_its_check_once(tmp_path):
    night = Night(tmp_path)
    with pytest.raises(HandoffWaiting):  # round 1: the replay prompt
        night.round()
    [replay] = night.waiting()
    [path] = WORKSPACE_LINE.findall(replay.prompt.read_text())
    workspace = Path(path)
    (workspace / "NOTES.md").write_text("validated\n")
    replay.answer.write_text("Validated total().")

    with pytest.raises(HandoffWaiting):  # round 2: the check runs, the judge is asked
        night.round()
    assert (workspace / "check-runs.txt").read_text() == "ran\n"
    [judge] = night.waiting()
    assert "`" + COUNTING_CHECK + "`: passed (exit 0)" in judge.prompt.read_text()
    judge.answer.write_text(json.dumps({"score": 0.9, "reason": "validates the input"}))

    result = night.round()  # round 3: the same work back, now judged
    assert result.soft == pytest.approx(0.9) and "passed (exit 0)" in result.explanation
    assert night.round().soft == pytest.approx(0.9)  # a re-run of the night: the same
    assert (workspace / "check-runs.txt").read_text() == "ran\n"  # run once, not per round
    assert tally(night.log) == {"pass": 1}
    [line] = night.log.read_text().splitlines()
    assert json.loads(line)["item"] == "t-validate"
