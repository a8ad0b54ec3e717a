"""`repo_tasks` without an agent: the shipped tasks are sound (the reference solution passes
every check, the shipped repo fails its tests), splits and options are validated, scores
follow the checks, and an agent that kept failing is a model error, not a score."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.config import EnvConfig
from core.environment.contract import EnvError, needs_agent
from core.models.types import RetriesExhausted
from envs import get_environment
from envs.repo_tasks.environment import run_checks, score_checks

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "repo_tasks"


def env(**options):
    return get_environment(EnvConfig(name="repo_tasks", options=options))


def all_items():
    e = env()
    return [item for split in ("train", "val", "test") for item in e.load_split(split)]


def test_splits_follow_the_manifests_and_the_env_needs_an_agent():
    e = env()
    assert needs_agent(e)
    for split in ("train", "val", "test"):
        ids = json.loads((MANIFESTS / f"{split}.json").read_text())
        assert [i.id for i in e.load_split(split)] == ids
    ids = [i.id for i in all_items()]
    assert len(ids) == len(set(ids)) == 6
    with pytest.raises(EnvError, match="unknown split"):
        e.load_split("dev")


@pytest.mark.parametrize("item", all_items(), ids=lambda i: i.id)
def test_the_reference_passes_every_check_and_the_shipped_repo_fails(item, tmp_path):
    checks = item.data["checks"]
    broken = tmp_path / "broken"
    shutil.copytree(item.data["repo"], broken)
    before = run_checks(broken, checks, 30)
    assert [r.passed for r in before] == [False] * len(checks)
    fixed = tmp_path / "fixed"
    shutil.copytree(item.data["repo"], fixed)
    reference = item.data["reference"]
    (fixed / reference["file"]).write_text(reference["content"])
    code_only = score_checks(run_checks(fixed, checks, 30), item.answer)
    assert (code_only.hard, code_only.soft) == (0.0, 0.5)
    for check in checks:
        if "contains" in check:
            with open(fixed / check["file"], "a") as fh:
                fh.write(check["contains"] + " fixed\n")
    full = score_checks(run_checks(fixed, checks, 30), item.answer)
    assert (full.hard, full.soft) == (1.0, 1.0)
    assert "2 of 2 checks passed" in full.explanation
    # The reference is for the optimizer: never in the agent's prompt.
    assert reference["content"] not in item.question


def test_bad_options_and_tasks_are_one_line_errors(tmp_path):
    with pytest.raises(EnvError, match="unknown env option"):
        env(colour="red")
    with pytest.raises(EnvError, match="check_timeout_s"):
        env(check_timeout_s=0)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train.json").write_text('["t1"]')
    (tmp_path / "d" / "t1").mkdir(parents=True)
    (tmp_path / "d" / "t1" / "task.json").write_text('{"id": "t1", "prompt": "x"}')
    broken = get_environment(
        EnvConfig(name="repo_tasks", manifest_dir=str(tmp_path / "m"), data_dir=str(tmp_path / "d"))
    )
    with pytest.raises(EnvError, match="malformed task"):
        broken.load_split("train")


async def test_an_agent_that_kept_failing_is_a_model_error_not_a_score():
    item = env().load_split("val")[0]

    async def failing_agent(task, skill_text):
        assert Path(task.files).is_dir() and task.prompt == item.question
        raise RetriesExhausted("gave up after 3 attempts: HTTP 529")

    result = await env().rollout(item, "a skill", failing_agent)
    assert result.error and "HTTP 529" in result.error
    assert result.hard == 0.0 and result.trajectory == [{"role": "user", "content": item.question}]


def test_checks_run_the_agents_code_without_our_keys(tmp_path, monkeypatch):
    """A check runs code the agent wrote: it must not see the user's API keys."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-secret-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-user-secret-0123456789")
    (tmp_path / "test_leak.py").write_text(
        "import os, unittest\n"
        "class Leak(unittest.TestCase):\n"
        "    def test_keys(self):\n"
        "        print(sorted(os.environ))\n"
        "        self.assertNotIn('sk-', ' '.join(os.environ.values()))\n"
    )
    checks = [{"name": "tests pass", "run": ["python", "-m", "unittest", "-q"]}]
    [result] = run_checks(tmp_path, checks, 30)
    assert result.passed, result.detail


# -- the agent and its code are kept away from the answers --------------------------------

ESCAPES = """\
import os, socket, unittest

TASK = {task!r}
HOST_FILE = {host_file!r}


def refused(action):
    try:
        action()
    except OSError:
        return True
    return False


class Escape(unittest.TestCase):
    def test_the_answers_and_the_host_are_out_of_reach(self):
        self.assertTrue(refused(lambda: open(TASK).read()), "read task.json")
        self.assertTrue(refused(lambda: open(HOST_FILE).read()), "read a host file")
        self.assertTrue(refused(lambda: open("/etc/passwd").read()), "read /etc/passwd")
        self.assertTrue(refused(lambda: open(HOST_FILE + ".new", "w")), "write outside")
        self.assertTrue(refused(lambda: os.kill(1, 0)) or os.getpid() < 10, "signal host init")

        def connect():
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()

        self.assertTrue(refused(connect), "reach a host listener")
"""


def test_check_commands_run_jailed_away_from_task_json_and_the_host(tmp_path):
    """The agent's code runs in the checks: inside the jail it cannot read task.json (the
    reference solution), a host file or /etc, write outside, or reach a host port. Before,
    checks ran on the host with only a scrubbed environment, and all of these worked."""
    import socket

    item = env().load_split("train")[0]
    task_json = Path(item.data["repo"]).parent / "task.json"
    host_file = tmp_path / "host" / "private.txt"
    host_file.parent.mkdir()
    host_file.write_text("host only\n")
    listener = socket.create_server(("127.0.0.1", 0))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "test_escape.py").write_text(
        ESCAPES.format(
            task=str(task_json), host_file=str(host_file), port=listener.getsockname()[1]
        )
    )
    checks = [{"name": "escapes", "run": ["python", "-m", "unittest", "-q"]}]
    try:
        [jailed] = run_checks(workspace, checks, 30)
        [unjailed] = run_checks(workspace, checks, 30, jailed=False)
    finally:
        listener.close()
    assert jailed.passed, jailed.detail
    assert not unjailed.passed and "read task.json" in unjailed.detail  # the old behaviour
    assert not (tmp_path / "host" / "private.txt.new").exists()


def test_a_check_past_its_time_is_killed_with_what_it_started(tmp_path):
    (tmp_path / "test_hang.py").write_text(
        "import subprocess, sys, time, unittest\n"
        "class Hang(unittest.TestCase):\n"
        "    def test_hang(self):\n"
        "        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True)\n"
        "        time.sleep(600)\n"
    )
    checks = [{"name": "hangs", "run": ["python", "-m", "unittest", "-q"]}]
    [result] = run_checks(tmp_path, checks, 2)
    assert not result.passed and "timed out after 2s" in result.detail


def test_without_bubblewrap_the_env_refuses_unless_unjailed_is_chosen(monkeypatch):
    import envs.jail

    monkeypatch.setattr(envs.jail.shutil, "which", lambda name: None)
    with pytest.raises(EnvError) as refused:
        env()
    message = str(refused.value)
    assert "\n" not in message and "bubblewrap" in message and "sandbox: unjailed" in message
    assert env(sandbox="unjailed").options["sandbox"] == "unjailed"
    with pytest.raises(EnvError, match="sandbox must be one of"):
        env(sandbox="none")


async def test_the_agent_is_confined_to_a_workspace_without_task_json():
    item = env().load_split("train")[0]
    task_folder = Path(item.data["repo"]).parent
    seen = {}

    async def agent(task, skill_text):
        seen["task"] = task
        raise RetriesExhausted("stop here")

    await env().rollout(item, "a skill", agent)
    task = seen["task"]
    assert task.workspace_only, "the agent could read task.json by its absolute path"
    assert not (Path(task.files) / "task.json").exists()
    for folder in task.readable:  # readable: this Python only, never the task folders
        assert not task_folder.resolve().is_relative_to(folder.resolve()), folder


def test_the_env_listing_without_bubblewrap_says_which_envs_cannot_run(monkeypatch):
    """`skillopt envs` builds every env: one that refuses without the jail is listed with
    why, not a crash of the listing (spreadsheetbench's chat target crashed it before)."""
    import envs.jail
    from envs.listing import list_environments

    monkeypatch.setattr(envs.jail.shutil, "which", lambda name: None)
    rows = {r.name: r for r in list_environments()}
    for name in ("repo_tasks", "spreadsheetbench"):
        assert "bubblewrap" in (rows[name].problem or ""), rows[name]
    assert rows["capitals"].data and rows["capitals"].problem is None
