"""A night on an API backend (a real loopback OpenAI-compatible server, the target a
scripted TEST DOUBLE returning tool calls) whose person ran `make test`: after each tools
replay the mined check runs in the replay workspace, in the jail, and decides the item —
a replay that claims the fix but leaves `make test` failing scores 0 although the judge
gave it 0.9; one that fixes it keeps the judge's 0.9. The judge was shown the results.
Without the jail the check is not run, the item is the judge's, and the records say so."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest

from core.config import config_from_dict
from core.models.types import Request
from core.skills_repo import SkillsRepo
from sleep.night import replay_shell
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night
from tests.sleep.night_checks_world import (
    FIXED,
    WRONG,
    make_project,
    part_of,
    parts_for,
    replayed_items,
    sessions,
)
from tests.sleep.night_double import Brain
from tests.support.jail import jail  # noqa: F401 - the fixture
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest, Reply

DAY = dt.date(2026, 12, 2)
PROTOCOL = "You are working in a copy of the project."
TRAIN = {
    "epochs": 1,
    "strategy": "llm",
    "gate": {"metric": "soft"},
    "schedule": {"kind": "constant", "start": 2, "end": 2},
    "slow_update": {"enabled": False},
    "meta_skill": {"enabled": False},
}


def call(name: str, **arguments) -> str:
    return "<tool>" + json.dumps({"name": name, "arguments": arguments}) + "</tool>"


class Server:
    """Tools replays: read calc.py, write it (right for the `fixing` parts, a wrong fix
    that says it skips None for the others), then say it is done. The judge gives every
    reply 0.9 (it claims the fix) and keeps its prompts; the rest is the night's Brain."""

    def __init__(self, parts: list[str], fixing: set[str]) -> None:
        self.parts, self.fixing = parts, fixing
        self.brain = Brain()
        self.judged: list[str] = []

    def __call__(self, record: RecordedRequest) -> Reply:
        messages = record.messages
        users = [m for m in messages if m["role"] == "user"]
        if users and users[0]["content"].startswith(PROTOCOL):
            part = part_of(users[0]["content"], self.parts)
            turn = sum(m["role"] == "assistant" for m in messages)
            code = FIXED if part in self.fixing else WRONG
            script = [
                call("read_file", path="calc.py"),
                call("write_file", path="calc.py", content=code),
                "Done: total() now skips None values.",
            ]
            return Reply(script[min(turn, 2)])
        text = messages[-1]["content"] if messages else ""
        if "You are grading one reply" in text:
            self.judged.append(text)
            return Reply(json.dumps({"score": 0.9, "reason": "the reply says total() is fixed"}))
        return Reply(self.brain(Request("openai", "m", messages)))


def api_night(tmp_path, server_url: str, project, parts, command: str = "make test") -> Night:
    role = {"backend": "openai", "base_url": server_url, "model": "m", "max_retries": 0}
    roles = {r: {**role, "timeout_s": 30.0} for r in ("target", "optimizer", "judge")}
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("calc", "# Calc\n\nKeep answers short.\n", deploy_to=str(project / "CLAUDE.md"))
    return Night(
        state_dir=tmp_path / "state",
        repo=repo,
        config=config_from_dict({"models": roles, "train": TRAIN}),
        harvest=lambda _freeze: Harvested(sessions(project, parts, command)),
        project=project,
        today=DAY,
        check_timeout_s=60.0,
        min_val_tasks=2,  # parts_for gives two held-out tasks, not the default six
    )


@pytest.mark.usefixtures("jail")
def test_a_failing_make_test_decides_the_item_whatever_the_judge_said(tmp_path):
    project = make_project(tmp_path)
    parts = parts_for(project)
    fixing = {parts[0], parts[2]}  # one val task and one train task are fixed right
    handler = Server(parts, fixing)
    with LoopbackOpenAI(handler=handler) as server:
        night = api_night(tmp_path, server.base_url, project, parts)
        plan = asyncio.run(night.plan())
        result = asyncio.run(night.run())
    assert result.status == "finished", result.message
    [planned] = plan.routes[0]["tasks"][:1]
    assert planned["replay"] == "tools"
    assert planned["checks"] == [
        {"kind": "command", "value": "make test", "will_run": True, "not_run_reason": ""}
    ]
    items = replayed_items(night.folder / "calc")
    assert items, "no rollout recorded"
    by_part = {}
    for row in items:
        part = part_of(row["question"], parts)
        by_part.setdefault(part, []).append(row)
        [checks] = [m for m in row["trajectory"] if m["role"] == "checks"]
        [check] = checks["checks"]
        assert check["command"] == "make test"
        assert "judge 0.90" in row["explanation"]
        if part in fixing:
            assert check["status"] == "pass" and check["exit_code"] == 0
            assert (row["soft"], row["hard"]) == (0.9, 1.0)
        else:
            assert check["status"] == "fail" and "TypeError" in check["output"]
            assert (row["soft"], row["hard"]) == (0.0, 0.0)
            assert "hard fail: `make test`: FAILED" in row["explanation"]
    assert set(by_part) == set(parts)
    # The judge read the results beside the reference and the diff.
    failed = [j for j in handler.judged if "`make test`: FAILED" in j]
    passed = [j for j in handler.judged if "`make test`: passed (exit 0)" in j]
    assert failed and passed
    assert all("What the person accepted" in j and "Changes made:" in j for j in failed)
    # The night's files hold every replay's results, and night.json their tally.
    log = [json.loads(x) for x in (night.folder / "checks" / "calc.jsonl").read_text().splitlines()]
    assert len(log) >= len(items) and {e["item"] for e in log} == {r["item_id"] for r in items}
    saved = json.loads((night.folder / "night.json").read_text())["skills"]["calc"]
    assert saved["checks"]["fail"] > 0 and saved["checks"]["pass"] > 0
    assert sum(saved["checks"].values()) == len(log)
    # The user's checkout is untouched: the checks ran in the copies.
    assert (project / "calc.py").read_text().endswith("return sum(xs)\n")
    assert not (project / ".pytest_cache").exists() and not (project / "__pycache__").exists()


def test_without_the_jail_the_check_is_not_run_and_the_judge_decides(tmp_path, monkeypatch):
    monkeypatch.setattr(replay_shell, "jail_problem", lambda: "bubblewrap (bwrap) is not installed")
    project = make_project(tmp_path)
    parts = parts_for(project)
    handler = Server(parts, fixing=set())  # every replay gets it wrong
    with LoopbackOpenAI(handler=handler) as server:
        night = api_night(tmp_path, server.base_url, project, parts)
        plan = asyncio.run(night.plan())
        result = asyncio.run(night.run())
    assert result.status == "finished", result.message
    [check] = plan.routes[0]["tasks"][0]["checks"]
    assert check["will_run"] is False
    assert "bubblewrap (bwrap) is not installed" in check["not_run_reason"]
    items = replayed_items(night.folder / "calc")
    assert items and all(row["soft"] == 0.9 for row in items)  # no check decided
    assert all(
        "not run (bubblewrap (bwrap) is not installed" in row["explanation"] for row in items
    )
    saved = json.loads((night.folder / "night.json").read_text())["skills"]["calc"]
    assert set(saved["checks"]) == {"not-run"}
    assert all("not run (bubblewrap" in j for j in handler.judged)


# The person's test needs a module only their project's venv holds (the venv is not
# committed: the replays' fresh checkouts lack it, as a real one's do).
VENV_TEST = (
    "import unittest\nfrom calc import total\nfrom calcdata import WITH_NONE\n\n\n"
    "class VenvTest(unittest.TestCase):\n"
    "    def test_skips_none(self):\n"
    "        self.assertEqual(total(WITH_NONE), 3)\n"
)


@pytest.mark.usefixtures("jail")
def test_a_check_runs_with_the_projects_own_venv_in_the_replay(tmp_path):
    import subprocess
    import sys

    from tests.sleep.night_checks_world import git

    project = make_project(tmp_path)
    (project / "test_venv.py").write_text(VENV_TEST)
    git(project, "add", "test_venv.py")
    git(project, "commit", "-q", "-m", "a test that needs the venv")
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (venv / "lib" / version / "site-packages" / "calcdata.py").write_text(
        "WITH_NONE = [1, None, 2]\n"
    )
    parts = parts_for(project)
    handler = Server(parts, fixing={parts[0], parts[2]})
    command = "python -m unittest -q test_venv"
    with LoopbackOpenAI(handler=handler) as server:
        night = api_night(tmp_path, server.base_url, project, parts, command)
        plan = asyncio.run(night.plan())
        result = asyncio.run(night.run())
    assert result.status == "finished", result.message
    [check] = plan.routes[0]["tasks"][0]["checks"]
    assert check == {"kind": "command", "value": command, "will_run": True, "not_run_reason": ""}
    items = replayed_items(night.folder / "calc")
    assert items, "no rollout recorded"
    for row in items:
        [checks] = [m for m in row["trajectory"] if m["role"] == "checks"]
        [ran] = checks["checks"]
        if part_of(row["question"], parts) in handler.fixing:
            assert (ran["status"], ran["exit_code"]) == ("pass", 0), ran["output"]
        else:
            assert ran["status"] == "fail" and "TypeError" in ran["output"]
            assert row["soft"] == 0.0
