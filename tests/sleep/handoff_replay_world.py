"""A handoff night's `handoff-workspace` replay of one mined task over a real git project,
round by round, each round a fresh environment over the night's files (as each run of the
night builds one). The person's agent and the judge are answered by the tests, writing the
real handoff answer files."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from core.models.handoff import HandoffBackend
from core.models.handoff_files import HandoffFolder
from core.models.types import Request
from sleep.mine.tasks import MinedTask
from sleep.night import (
    handoff_answers,  # noqa: F401 - registers itself when imported
    handoff_workspace,  # noqa: F401 - registers itself when imported
)
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from tests.support.skills_git import plain_git as git

SKILL = "# Notes app\n\nRun the tests before you finish.\n"
WORKSPACE_LINE = re.compile(r"^    (/\S+/work)$", re.MULTILINE)


def workspace_named(prompt: Path) -> Path:
    [path] = WORKSPACE_LINE.findall(prompt.read_text())
    return Path(path)


def project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "notes-app"
    root.mkdir()
    (root / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root, git(root, "rev-parse", "HEAD").strip()


class Night:
    def __init__(self, tmp_path: Path, **task) -> None:
        self.handoff = tmp_path / "night" / "handoff"
        self.log = tmp_path / "night" / "checks" / "notes-app.jsonl"
        self.root, self.commit = project(tmp_path)
        self.task = MinedTask(
            id="t-validate",
            intent="add input validation to total()",
            project=str(self.root),
            kind="agentic",
            **task,
        )

    def env(self) -> ReplayEnvironment:
        """A fresh environment over the night's files, as each run of the night builds."""
        judge = HandoffBackend(self.handoff, role="judge")

        async def ask_judge(messages, **_):
            return await judge.send(Request("handoff", "handoff", messages), timeout_s=5)

        where = AgentReplay(
            self.root, self.commit, "notes-app", keep_in=self.handoff / "workspaces"
        )
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
