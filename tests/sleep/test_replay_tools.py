"""Issue 21: an agentic task replayed on an API backend runs our tool loop in a fresh copy
of the project at the recorded commit — through the real model client and a real loopback
OpenAI-compatible server whose scripted replies are tool calls — and the judge sees the
final message and the diff. The user's checkout is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.models.factory import build_model_client
from sleep.mine.tasks import Check, MinedTask
from sleep.night import replay_shell
from sleep.night.replay_env import ReplayEnvironment
from sleep.night.replay_modes import replay_at_night, replay_mode
from sleep.night.replay_tools import ToolReplay, skill_path_for
from sleep.night.routing import AGENTS_MD, CLAUDE_CODE
from tests.core.models.helpers import ENV, loopback_config
from tests.support.jail import jail  # noqa: F401 - the fixture
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest, Reply
from tests.support.project_tree import snapshot
from tests.support.skills_git import plain_git as git

FIXED = "def total(xs):\n    return sum(x for x in xs if x is not None)\n"


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "calc.py").write_text("def total(xs):\n    return sum(xs)\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    commit = git(repo, "rev-parse", "HEAD").strip()
    (repo / "calc.py").write_text("# the user's unfinished work\n")  # never seen by a replay
    return repo, commit


def call(name: str, **arguments) -> str:
    return "<tool>" + json.dumps({"name": name, "arguments": arguments}) + "</tool>"


class Scripted:
    """The loopback server's handler: the target's turns follow a script (tool calls, then a
    final message); the judge (a request holding the judge prompt) scores 1 when the reply
    shows the fix in its diff, else 0."""

    def __init__(self, *turns: str) -> None:
        self.turns = list(turns)
        self.target_requests: list[RecordedRequest] = []

    def __call__(self, record: RecordedRequest) -> Reply:
        text = record.messages[-1]["content"] if record.messages else ""
        if "You are grading one reply" in text:
            fixed = "+    return sum(x for x in xs if x is not None)" in text
            return Reply(json.dumps({"score": 1.0 if fixed else 0.0, "reason": "diff"}))
        self.target_requests.append(record)
        return Reply(self.turns.pop(0))


def agentic_task(**extra) -> MinedTask:
    return MinedTask(
        id="t-fix",
        intent="make total() skip None values",
        project=None,
        kind="agentic",
        rubric="total() ignores None",
        **extra,
    )


async def replay(tmp_path, script: Scripted, project, task: MinedTask, *, shell: bool = False):
    repo, commit = project
    with LoopbackOpenAI(handler=script) as server:
        config = loopback_config(server.base_url, tmp_path)
        config.models.judge = config.models.target.model_copy()
        async with build_model_client(config, environ=ENV) as client:
            env = ReplayEnvironment(
                {"train": [task]},
                client.bind("judge"),
                tools=ToolReplay(repo, commit, skill_path="CLAUDE.md", shell=shell),
                target_backend="openai",  # an API backend: agentic tasks replay as tools
            )
            [item] = env.load_split("train")
            return await env.rollout(
                item, "# Skill\nRead calc.py before editing.", client.bind("target")
            )


async def test_the_loop_reads_and_edits_the_copy_and_the_judge_sees_the_diff(tmp_path, project):
    repo, _ = project
    before, status = snapshot(repo), git(repo, "status", "--porcelain")
    script = Scripted(
        call("list_dir", path=".") + call("read_file", path="calc.py"),
        call("read_file", path="CLAUDE.md"),
        call("write_file", path="calc.py", content=FIXED),
        "total() now skips None values.",
    )
    result = await replay(
        tmp_path, script, project, agentic_task(checks=[Check("contains", "None")])
    )
    assert result.soft == 1.0 and result.hard == 1.0
    assert result.prediction.startswith("total() now skips None values.\n\nChanges made:\n")
    assert "+    return sum(x for x in xs if x is not None)" in result.prediction
    first, second, third, _ = (r.messages for r in script.target_requests)
    assert first[0] == {"role": "system", "content": "# Skill\nRead calc.py before editing."}
    assert "Task: make total() skip None values" in first[-1]["content"]
    # The copy is the recorded commit (not the user's unfinished work), skill in CLAUDE.md.
    assert "CLAUDE.md\ncalc.py" in second[-1]["content"]
    assert "2:     return sum(xs)" in second[-1]["content"]
    assert "unfinished" not in second[-1]["content"]
    assert "1: # Skill" in third[-1]["content"]
    assert result.trajectory[-1]["role"] == "diff"
    assert "calc.py" in result.trajectory[-1]["content"]
    assert "CLAUDE.md" not in result.trajectory[-1]["content"]
    assert snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == status


async def test_attempts_to_leak_are_refused_in_the_replay(tmp_path, project):
    repo, _ = project
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    script = Scripted(
        call("read_file", path="../secret.txt")
        + call("read_file", path=str(secret))
        + call("write_file", path="../project/calc.py", content="pwned\n")
        + call("write_file", path=str(repo / "calc.py"), content="pwned\n"),
        "I could not do it.",
    )
    before = snapshot(repo)
    result = await replay(tmp_path, script, project, agentic_task())
    results = script.target_requests[1].messages[-1]["content"]
    assert results.count("refused:") == 4
    assert "TOP SECRET" not in results
    assert snapshot(repo) == before
    assert result.soft == 0.0


async def test_without_the_jail_there_is_no_shell_and_the_task_says_so(
    tmp_path, project, monkeypatch
):
    monkeypatch.setattr(replay_shell, "jail_problem", lambda: "bubblewrap (bwrap) is not installed")
    script = Scripted(call("shell", command="cat /etc/passwd"), "no shell")
    await replay(tmp_path, script, project, agentic_task(), shell=True)
    prompt = script.target_requests[0].messages[-1]["content"]
    assert "No shell is available in this replay (bubblewrap (bwrap) is not installed)" in prompt
    assert "- shell" not in prompt
    assert "error: unknown tool 'shell'" in script.target_requests[1].messages[-1]["content"]


@pytest.mark.usefixtures("jail")
async def test_the_shell_runs_in_the_jail_over_the_copy(tmp_path, project):
    repo, _ = project
    before = snapshot(repo)
    script = Scripted(
        call(
            "shell",
            command=f"cat calc.py > copy.txt; ls /; cat /etc/passwd; echo x > ../x; "
            f"cat {repo}/calc.py; echo pwned > {repo}/calc.py",
        ),
        call("write_file", path="calc.py", content=FIXED)
        + call("write_file", path="notes/new.md", content="new\n"),
        call("shell", command="echo checked >> notes/new.md; echo more > notes/more.md"),
        "done",
    )
    result = await replay(tmp_path, script, project, agentic_task(), shell=True)
    assert "- shell" in script.target_requests[0].messages[-1]["content"]
    output = script.target_requests[1].messages[-1]["content"]
    assert "root:" not in output and "home\n" not in output and "unfinished" not in output
    assert "b/copy.txt" in result.prediction and "+    return sum(xs)" in result.prediction
    # the shell can change what write_file created, in the folder it created
    assert "+new\n+checked" in result.prediction and "b/notes/more.md" in result.prediction
    assert snapshot(repo) == before


async def test_an_advice_task_stays_one_chat_call(tmp_path, project):
    script = Scripted("Use a generator expression.")
    task = MinedTask(id="t-a", intent="how should I sum?", project=None, rubric="generator")
    result = await replay(tmp_path, script, project, task)
    [request] = script.target_requests
    assert request.messages[-1] == {"role": "user", "content": "how should I sum?"}
    assert result.prediction == "Use a generator expression."


def test_which_tasks_and_where_the_skill_goes():
    assert replay_mode(agentic_task(), "openai").mode == "tools"
    assert replay_at_night(agentic_task(), "openai").mode == "tools"  # built in: no runner
    assert replay_mode(MinedTask(id="a", intent="?", project=None), "openai").mode == "chat"
    assert skill_path_for(frozenset({AGENTS_MD})) == "AGENTS.md"
    assert skill_path_for(frozenset({CLAUDE_CODE})) == "CLAUDE.md"
    assert skill_path_for(None) == "CLAUDE.md"


@pytest.mark.usefixtures("jail")
def test_a_jailed_command_past_its_time_is_stopped(tmp_path):
    shell = replay_shell.JailedShell(tmp_path)
    assert shell("echo started; sleep 60", 0.5) == "started\n[stopped after 0.5s]"


async def test_a_follow_up_starts_from_the_copy_with_its_earlier_edits_applied(tmp_path, project):
    """A follow-up's earlier turns' edits are in the copy before the loop starts, and the
    diff the judge sees holds this request's changes only (fails on the old code: the copy
    was the bare commit and the prompt said the changes may be missing)."""
    from sleep.harvest.file_edits import FileEdit
    from sleep.mine.tasks import Turn

    script = Scripted(call("read_file", path="calc.py"), "It already skips None.")
    earlier = FileEdit("calc.py", "sum(x for x in xs if x is not None)", "sum(xs)")
    task = agentic_task(context=[Turn("make total() skip None", "done")], prior_edits=[earlier])
    result = await replay(tmp_path, script, project, task)
    first, second = (r.messages for r in script.target_requests)
    assert "already applied here (edited calc.py)" in first[-1]["content"]
    assert "2:     return sum(x for x in xs if x is not None)" in second[-1]["content"]
    assert result.trajectory[0] == {"role": "prior_edits", "content": "applied: edited calc.py"}
    assert result.trajectory[-1] == {"role": "diff", "content": "(no changes)"}
