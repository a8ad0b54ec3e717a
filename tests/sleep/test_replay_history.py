"""A task whose session read the git history ("summarise what changed this week": `git
log`) is replayed with the history as it was at its start commit, and nothing later: a
workspace replay works in a copy holding that history as its `.git`, a chat replay is
shown what the session's history commands print there (redacted). Its failure is then
the skill's, not a lack of inputs (sleep/night/history.py). A real git project with a
commit, a tag and a branch made after the session began, which must not leak; the chat
target, the tool-loop model, the agent and the judge are TEST DOUBLES."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from core.models.agents.workspace import Placement, fresh_workspace, pristine_tree, workspace_diff
from core.models.types import AgentOutcome, AgentTask, Completion, Usage
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import MinedTask
from sleep.night import history
from sleep.night.handoff_workspace import prepared
from sleep.night.history import history_invocations
from sleep.night.replay_env import AgentReplay, ReplayEnvironment, _start_tree
from sleep.night.replay_tools import ToolReplay
from tests.sleep.test_replay_start import commit_at

SUMMARY = "summarise what changed in the repo this week"
STARTED = "2026-03-26T14:00:00Z"
KEY = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7654321"
LOG = "git log --since=2026-03-01 --oneline"
SHOW = "git -C {cwd} show HEAD"


def project_with_later_history(tmp_path: Path) -> tuple[Path, str]:
    """Two commits before the session (one message holds a key), then a commit, a tag
    and a side branch after it began: the night's HEAD is the later commit."""
    project = tmp_path / "photo-shelf"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    (project / "shelf.py").write_text("SIZES = [64]\n")
    commit_at(project, "2026-03-20T09:00:00Z", "add thumbnails")
    (project / "shelf.py").write_text("SIZES = [64, 128]\n")
    commit_at(project, "2026-03-24T09:00:00Z", f"bigger thumbnails (deploy key {KEY})")
    (project / "shelf.py").write_text("SIZES = [64, 128, 256]\n")
    head = commit_at(project, "2026-03-27T09:00:00Z", "LATER: retina thumbnails")
    git = lambda *a: subprocess.run(["git", "-C", str(project), *a], check=True)  # noqa: E731
    git("tag", "v-later")
    git("branch", "side-later")
    return project, head


def summary_task(project: Path, kind: str) -> MinedTask:
    prompt = {"text": SUMMARY, "timestamp": STARTED, "aborted": False,
              "answer": "Two changes: thumbnails, then bigger thumbnails.",
              "commands": [LOG, SHOW.format(cwd=project), "git status"]}  # fmt: skip
    session = {"source": "codex", "session_id": "s1", "cwd": str(project),
               "automation": False, "tasks": [prompt]}  # fmt: skip
    [task] = mine_sessions([session])
    assert task.reads_history and task.history_commands == [LOG, SHOW.format(cwd=project)]
    assert MinedTask.from_dict(task.to_dict()).history_commands == task.history_commands
    task.kind, task.rubric = kind, "names both thumbnail changes"
    return task


def judge(score: float):
    async def grade(_messages, **_kw):  # a TEST DOUBLE of the judge
        return Completion(json.dumps({"score": score, "reason": "r"}), Usage(), "stop", 0.0, "j")

    return grade


def chat_replay(tmp_path: Path, seen: list[str]):
    """A chat replay of the history-reading task, its environment and item, and a TEST
    DOUBLE of the chat target that keeps each prompt it is given in `seen`."""
    project, head = project_with_later_history(tmp_path)
    task = summary_task(project, "advice")

    async def target(messages, **_kw):
        seen.append(messages[-1]["content"])
        return Completion("Nothing changed.", Usage(), "stop", 0.0, "t")

    where = {"workspace": AgentReplay(project, head, "photo-shelf")}
    env = ReplayEnvironment({"val": [task]}, judge(0.2), target_backend="handoff", **where)
    [item] = env.load_split("val")
    return env, item, target


def test_a_chat_replay_is_shown_the_history_commands_output_at_its_start(tmp_path):
    """Fails on the old code: the prompt held no history, and a failure of it was marked
    as lacking its inputs."""
    seen: list[str] = []
    env, item, target = chat_replay(tmp_path, seen)
    result = asyncio.run(env.rollout(item, "# Notes\n", target))
    [prompt] = seen
    assert f"$ {LOG}" in prompt and "add thumbnails" in prompt and "bigger thumbnails" in prompt
    assert "SIZES = [64, 128]" in prompt  # `git show HEAD` is the start commit
    assert "LATER" not in prompt and "v-later" not in prompt and "side-later" not in prompt
    assert KEY not in prompt  # the history is redacted like any file shown
    assert result.hard == 0 and result.lacked_inputs == ""  # the skill's failure now


def tool_call(name: str, **arguments) -> str:
    return "<tool>" + json.dumps({"name": name, "arguments": arguments}) + "</tool>"


def test_a_tools_replay_works_in_a_copy_holding_the_history_up_to_its_start(tmp_path):
    """Fails on the old code: the copy had no `.git`, so `git log` found no history."""
    project, head = project_with_later_history(tmp_path)
    task = summary_task(project, "agentic")
    outputs: list[str] = []

    async def model(messages, **_kw):  # a TEST DOUBLE of the tool loop's model
        if not any(m["content"].startswith("Tool results:") for m in messages[1:]):
            return Completion(tool_call("shell", command="git log --all --oneline --decorate"),
                              Usage(), "stop", 0.0, "t")  # fmt: skip
        outputs.append(messages[-1]["content"])
        return Completion("Summary: " + messages[-1]["content"], Usage(), "stop", 0.0, "t")

    where = {"tools": ToolReplay(project, head)}
    env = ReplayEnvironment({"val": [task]}, judge(0.2), target_backend="openai", **where)
    [item] = env.load_split("val")
    result = asyncio.run(env.rollout(item, "# Notes\n", model))
    [output] = outputs
    assert "add thumbnails" in output and "bigger thumbnails" in output
    assert "LATER" not in output and "v-later" not in output and "side-later" not in output
    assert ".git" not in result.prediction  # the history is not part of the diff
    assert result.hard == 0 and result.lacked_inputs == ""


def test_a_coding_agent_s_copy_holds_the_history_and_its_diff_leaves_it_out(tmp_path):
    """The agent backends copy the folder they are given (core/models/agents/cli.py):
    the copy keeps the history's `.git`, and the diff shows the agent's change only."""
    project, head = project_with_later_history(tmp_path)
    task = summary_task(project, "agentic")
    logs: list[str] = []

    async def agent(task: AgentTask, _skill: str) -> AgentOutcome:  # a TEST DOUBLE agent
        with (
            pristine_tree(task.files, task.commit) as original,
            fresh_workspace(original.root, keep=False) as workspace,
        ):
            git = ["git", "-C", str(workspace), "-c", f"safe.directory={workspace}"]
            run = subprocess.run([*git, "log", "--all", "--oneline"], capture_output=True)
            logs.append(run.stdout.decode())
            subprocess.run([*git, "status"], capture_output=True)  # rewrites .git/index
            (workspace / "CHANGES.md").write_text("thumbnails\n")
            diff = workspace_diff(original.root, workspace, Placement((), ()))
        return AgentOutcome("Summary.", [], diff, 0, Usage(), 0.0, "a", "", None)

    env = ReplayEnvironment(
        {"val": [task]}, judge(1.0), agent=AgentReplay(project, head, "photo-shelf")
    )
    [item] = env.load_split("val")
    result = asyncio.run(env.rollout(item, "# Notes\n", agent))
    [log] = logs
    assert "bigger thumbnails" in log and "LATER" not in log
    diff = next(m["content"] for m in result.trajectory if m["role"] == "diff")
    assert "CHANGES.md" in diff and ".git/" not in diff


def test_only_read_only_history_commands_are_run_again():
    assert history_invocations("git -C /p log --oneline | head -5") == (
        [["log", "--no-ext-diff", "--no-textconv", "--oneline"]],
        "",
    )
    assert history_invocations("git log --output=/tmp/x")[0] == []
    assert history_invocations("git shortlog -sn && git blame a.py")[0] == [
        ["shortlog", "-sn"],
        ["blame", "a.py"],
    ]
    assert history_invocations("git reflog")[0] == []  # the checkout's, not the project's


def test_a_handoff_workspace_holds_the_history_and_its_diff_leaves_it_out(tmp_path):
    """The mode the strong-model night replayed "summarise this week" in: the prepared
    copy names a folder made from the history (stable under the night's folder, so a
    resumed night finds the same workspace), and its work tree is given that `.git`."""
    project, head = project_with_later_history(tmp_path)
    task = summary_task(project, "agentic")
    keep = tmp_path / "night" / "handoff" / "workspaces"
    env = ReplayEnvironment({"val": [task]}, judge(1.0), target_backend="handoff")
    [item] = env.load_split("val")
    with _start_tree(item, project, head, keep) as start:
        assert start.history and start.commit is None and start.files.parent == keep
        agent = AgentTask("summarise", start.files, "photo-shelf", check=lambda _w: None)
        workspace, fresh = prepared(keep / "w1", agent, "# Notes\n", "CLAUDE.md")
    assert fresh
    git = ["git", "-C", str(workspace.root), "-c", f"safe.directory={workspace.root}"]
    log = subprocess.run([*git, "log", "--all", "--oneline"], capture_output=True, text=True)
    assert "bigger thumbnails" in log.stdout and "LATER" not in log.stdout
    (workspace.root / "CHANGES.md").write_text("thumbnails\n")
    diff = workspace.diff()
    assert "CHANGES.md" in diff and ".git/" not in diff
    with _start_tree(item, project, head, keep) as again:  # the next round: the same folder
        assert again.files == start.files


def test_a_chat_replay_builds_the_history_once_for_every_rollout_of_a_task(tmp_path, monkeypatch):
    """Fails on the old code: each rollout (each candidate, each epoch) built the
    temporary history repository again."""
    builds: list[str] = []
    build = history.build_history

    def counted(source, commit, place):
        builds.append(commit)
        return build(source, commit, place)

    monkeypatch.setattr(history, "build_history", counted)
    seen: list[str] = []
    env, item, target = chat_replay(tmp_path, seen)
    for skill in ("# Notes\n", "# Notes\n\nName each change.\n"):
        asyncio.run(env.rollout(item, skill, target))
    assert len(builds) == 1
    first, second = seen
    assert f"$ {LOG}" in first and first.replace("Name each change.", "") == second.replace(
        "Name each change.", ""
    )
