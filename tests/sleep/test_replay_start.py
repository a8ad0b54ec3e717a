"""A task replays where the person started (sleep/prior_edits.commit_before): the
project's last commit before the task's session began, not the night's HEAD, where the
person's request is already done and committed (a correct replay would be an empty diff)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from core.agent_loop.workspace import replay_workspace
from core.models.types import AgentOutcome, Completion, Usage
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import MinedTask
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from tests.sleep.test_prior_edits import harvested
from tests.sleep.transcripts import claude_assistant, claude_user, codex_meta, codex_prompt

SESSION_START = "2026-03-26T14:02:10.018Z"
REQUEST = "use the logging module instead of print in app.py"


def commit_at(project: Path, when: str, message: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    run = lambda *a: subprocess.run(["git", "-C", str(project), *a], check=True,  # noqa: E731
                                    capture_output=True, text=True, env=env)  # fmt: skip
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", message)
    return run("rev-parse", "HEAD").stdout.strip()


def project_with_work_committed_after(tmp_path: Path) -> tuple[Path, str, str]:
    """A real git project: a commit the day before the session, then the person's
    request done and committed an hour after the session began."""
    project = tmp_path / "app"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "app.py").write_text("def main():\n    print('hi')\n")
    before = commit_at(project, "2026-03-25T10:00:00Z", "start")
    (project / "app.py").write_text(
        "import logging\n\n\ndef main():\n    logging.getLogger(__name__).info('hi')\n"
    )
    head = commit_at(project, "2026-03-26T15:00:00Z", "logging instead of print")
    return project, before, head


def mined_request(tmp_path: Path, cwd: str) -> MinedTask:
    records = [
        claude_user(REQUEST, cwd=cwd, timestamp=SESSION_START),
        claude_assistant("Switched app.py to logging.", cwd=cwd),
    ]
    (task,) = [t for t in mine_sessions(harvested(tmp_path, records)) if t.intent == REQUEST]
    return task


def test_the_replay_starts_at_the_last_commit_before_the_session(tmp_path):
    from sleep.night.edited_tree import commit_before

    project, before, head = project_with_work_committed_after(tmp_path)
    task = mined_request(tmp_path, str(project))
    assert task.session_started == SESSION_START
    assert MinedTask.from_dict(task.to_dict()).session_started == SESSION_START  # archived
    assert commit_before(project, head, task.session_started) == before
    # unknown start, or no commit that old: the night's commit
    assert commit_before(project, head, None) == head
    assert commit_before(project, head, "2020-01-01T00:00:00Z") == head


async def test_a_correct_replay_of_work_committed_later_has_a_non_empty_diff(tmp_path):
    """Fails on the old code: the replay started at the night's HEAD, where app.py already
    logs, so the person's own change made no diff and no check on the diff could tell."""
    project, before, head = project_with_work_committed_after(tmp_path)
    task = mined_request(tmp_path, str(project))
    seen: dict[str, str] = {}

    async def agent_double(agent_task, skill):  # a TEST DOUBLE of a correct agent
        with replay_workspace(
            agent_task.files, agent_task.commit, skill_path="CLAUDE.md", skill_text=skill
        ) as ws:
            seen["commit"] = agent_task.commit
            app = ws.root / "app.py"
            app.write_text(app.read_text().replace("print('hi')", "logging.info('hi')"))
            app.write_text("import logging\n\n\n" + app.read_text())
            diff = ws.diff()
        return AgentOutcome("Switched to logging.", [], diff, 0, Usage(), 0.0, "double", "", None)

    async def judge(_messages, **_kw):
        return Completion(json.dumps({"score": 1, "reason": "ok"}), Usage(), "stop", 0.0, "j")

    env = ReplayEnvironment(
        {"val": [task]}, judge, agent=AgentReplay(project, head, "app"),
        target_backend="claude_code",
    )  # fmt: skip
    (item,) = env.load_split("val")
    result = await env.rollout(item, "", agent_double)
    assert seen["commit"] == before
    diff = next(m["content"] for m in result.trajectory if m["role"] == "diff")
    assert "-    print('hi')" in diff and "+import logging" in diff


def test_a_codex_session_starts_at_the_commit_it_recorded(tmp_path):
    """Codex records the project's HEAD when a session begins (session_meta git.commit_hash):
    that is where its tasks replay, even when the commit that holds its work is dated
    before the session (a clock, a rebase, or a corpus that dates commits by batch), where
    commit time alone would pick the work's own commit."""
    from sleep.night.edited_tree import start_commit

    project = tmp_path / "app"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "app.py").write_text("def main():\n    print('hi')\n")
    before = commit_at(project, "2026-03-25T10:00:00Z", "start")
    (project / "app.py").write_text("import logging\n")
    head = commit_at(project, "2026-03-26T14:00:00Z", "the work, dated before the session")
    cwd = str(project)
    records = [
        codex_meta(cwd=cwd, git={"branch": "main", "commit_hash": before}),
        *codex_prompt(REQUEST, timestamp=SESSION_START),
    ]
    (task,) = [t for t in mine_sessions(harvested(tmp_path, records, codex=True))
               if t.intent == REQUEST]  # fmt: skip
    assert task.session_commit == before
    assert start_commit(project, head, task.session_started, task.session_commit) == before
    # by time alone it would be the work's own commit; a recorded commit the night's
    # history does not hold (another clone's) falls back to the time
    assert start_commit(project, head, task.session_started) == head
    assert start_commit(project, head, task.session_started, "f" * 40) == head
