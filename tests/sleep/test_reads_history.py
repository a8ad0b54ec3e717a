"""A task whose session read the git history ("summarise what changed in the repo this
week": `git log`) is marked as reading the history; where its replay cannot be given the
history, a failure of it lacked its inputs and is kept from the analysts, not scored as
the skill's failure (sleep/mine/heuristic.reads_history, sleep/night/history.py). The
photos corpus was written by the real Codex CLI."""

from __future__ import annotations

import asyncio

from core.models.types import Completion, Usage
from sleep.mine.heuristic import mine_sessions, reads_history
from sleep.mine.tasks import MinedTask
from sleep.night.replay_env import ReplayEnvironment
from tests.sleep.corrections_world import CORPORA, lay_out
from tests.sleep.test_interrupted import session
from tests.support.corrections_score import plan_tasks

SUMMARY = "summarise what changed in the repo this week"


def test_the_codex_session_s_git_log_marks_its_task_as_reading_history(tmp_path):
    """Fails on the old code: nothing recorded that the session read the history."""
    plan = lay_out(tmp_path, CORPORA["photos"]).dry_run()
    mined = [t for t in plan_tasks(plan) if t["text"].startswith(SUMMARY)]
    assert mined and all(t["reads_history"] is True for t in mined)  # one per skill routed
    # the command its replay re-runs (chat) or finds the history for (workspace)
    assert all(t["history_commands"] == ["git log --oneline"] for t in mined)
    others = [t for t in plan_tasks(plan) if not t["text"].startswith(SUMMARY)]
    assert others and not any(t["reads_history"] for t in others)


def test_a_failed_replay_without_the_history_lacked_its_inputs():
    """Where the history cannot be given (a chat replay with no project to read it from:
    sleep/night/history.py gives it otherwise, test_replay_history), a failure of it lacked
    its inputs."""
    prompt = {"text": SUMMARY, "timestamp": None, "aborted": False, "answer": "Three commits…",
              "commands": ["git log --since='1 week ago' --oneline"]}  # fmt: skip
    [task] = mine_sessions([session(prompt)])
    assert task.reads_history
    assert MinedTask.from_dict(task.to_dict()).reads_history  # kept in the archive
    task.kind, task.rubric = "advice", "lists the week's changes"  # a chat replay

    async def reply(_messages, **_kw):  # TEST DOUBLES of the chat target and the judge
        return Completion("I cannot see any history.", Usage(), "stop", 0.0, "t")

    async def judge(_messages, **_kw):
        return Completion('{"score": 0.2, "reason": "no summary"}', Usage(), "stop", 0.0, "j")

    env = ReplayEnvironment({"train": [task]}, judge=judge)
    [item] = env.load_split("train")
    result = asyncio.run(env.rollout(item, "", reply))
    assert result.hard == 0 and "git history" in result.lacked_inputs


def test_which_commands_read_the_history():
    assert reads_history("git log --oneline") and reads_history("git -C . show HEAD~2")
    assert reads_history("git diff HEAD~3 -- photos/") and reads_history("git shortlog -sn")
    assert not reads_history("git status") and not reads_history("git diff")
