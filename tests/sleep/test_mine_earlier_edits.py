"""A request replays on the project as it stood when the person asked: its session's
earlier edits applied, whether or not the earlier turns are shown as context (issue 37,
round 6: on the held-out ledger corpus "add a test for archive_old", asked right after
its session wrote archive.py, replayed without archive.py and scored 0 under every skill;
"what happens if two archive runs overlap?", a task the miner made, was told "archive.py:
not available"). A real git project and a real Claude Code transcript; the agent, judge
and miner model are TEST DOUBLES."""

from __future__ import annotations

import json
from dataclasses import replace

from core.models.agents.workspace import pristine_tree
from core.models.types import AgentOutcome, Completion, Usage
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import TaskArchive
from sleep.mine.with_model import mine_with_model
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from tests.sleep.test_mine_model_keeps import scripted  # the miner model's TEST DOUBLE
from tests.sleep.test_prior_edits import git_project, harvested, tool_result, tool_use
from tests.sleep.transcripts import claude_assistant, claude_user

ARCHIVE = "add an archive subcommand that moves statements older than a year to archive/"
TEST = "add a unit test module tests/test_archive.py covering archive_old with a temporary folder"
QUESTION = "wait, what happens if two archive runs overlap?"
ARCHIVE_PY = "def archive_old(folder):\n    return []\n"


def session_records(cwd: str) -> list[dict]:
    """The request that writes archive.py, then a request that needs it, then a question
    about it (the heuristic takes the question for a correction of the test request)."""
    write = {"file_path": f"{cwd}/archive.py", "content": ARCHIVE_PY}
    return [
        claude_user(ARCHIVE, cwd=cwd),
        tool_use(cwd, "Write", write, "toolu_1"),
        tool_result(cwd, "toolu_1"),
        claude_assistant("Added archive.py with archive_old().", cwd=cwd),
        claude_user(TEST, cwd=cwd),
        claude_assistant("Added tests/test_archive.py.", cwd=cwd),
        claude_user(QUESTION, cwd=cwd),
        claude_assistant("The second run finds the files already moved.", cwd=cwd),
    ]


async def test_a_request_with_no_context_replays_after_its_sessions_earlier_edits(tmp_path):
    """Fails on the old code: the test request carried no earlier edits (it shows no
    context), so its replay started without archive.py."""
    project, commit = git_project(tmp_path)
    sessions = harvested(tmp_path, session_records(str(project)))
    (task,) = [t for t in mine_sessions(sessions) if t.intent == TEST]
    assert task.context == []  # it names nothing of the earlier prompt: none shown
    assert [e.describe() for e in task.prior_edits] == ["wrote archive.py"]
    # the archive keeps them when the request is seen again in a session with no edits
    archive = TaskArchive(tmp_path / "tasks.json")
    archive.merge([task])
    archive.merge([replace(task, prior_edits=[], source_sessions=["claude:another"])])
    assert archive.load()[task.id].prior_edits == task.prior_edits

    seen: dict[str, str] = {}

    async def agent_double(agent_task, _skill):  # a TEST DOUBLE of the agent: reads only
        with pristine_tree(agent_task.files, agent_task.commit) as tree:
            archive = tree.root / "archive.py"
            seen["archive.py"] = archive.read_text() if archive.exists() else "(missing)"
        return AgentOutcome("Added a test.", [], "", 0, Usage(), 0.0, "double", "", None)

    async def judge(_messages, **_kw):
        return Completion(json.dumps({"score": 1, "reason": "ok"}), Usage(), "stop", 0.0, "j")

    env = ReplayEnvironment({"train": [task]}, judge, agent=AgentReplay(project, commit, "p"),
                            target_backend="claude_code")  # fmt: skip
    (item,) = env.load_split("train")
    await env.rollout(item, "# skill", agent_double)
    assert seen["archive.py"] == ARCHIVE_PY
    assert not (project / "archive.py").exists()  # the checkout untouched


async def test_a_task_the_miner_makes_of_a_taken_correction_keeps_the_earlier_edits(tmp_path):
    """Fails on the old code: the miner's task for the question had no earlier edits, so
    a chat replay could not show the archive.py it asks about."""
    project, _commit = git_project(tmp_path)
    sessions = harvested(tmp_path, session_records(str(project)))
    reply = {"tasks": [
        {"intent": TEST, "kind": "agentic", "sources": [2], "corrections": [], "checks": []},
        {"intent": QUESTION, "kind": "advice", "sources": [3], "corrections": [], "checks": []},
    ]}  # fmt: skip
    by_intent = {t.intent: t for t in await mine_with_model(sessions, scripted(reply))}
    assert [e.describe() for e in by_intent[QUESTION].prior_edits] == ["wrote archive.py"]
