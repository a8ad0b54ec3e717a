"""officeqa and spreadsheetbench items end to end through the REAL `claude` and `codex`
binaries (shared AGENT-CLIS.md) against a scripted brain on loopback: the real agent runs
the real tool calls in its fresh workspace (searches and reads the bulletin; inspects the
workbook, writes and runs a program that saves output.xlsx), the skill reaches it where
it reads skills, and the unchanged scorers score what it produced. An agent that reaches
for the reference answers outside its workspace comes back empty-handed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from core.models.factory import build_model_client
from core.models.types import BadRequestError
from tests.core.models.helpers import FakeSleep
from tests.envs.benchmarks.test_exec_targets import officeqa_env, sheets_env
from tests.support.agent_clis import (
    AGENT_TESTS,
    AGENTS,
    AGENTS_SANDBOXED,
    MODEL,
    PROTOCOL,
    SERVER,
    agent_config,
)
from tests.support.benchmark_agent_brain import OfficeQABrain, SpreadsheetBrain

pytestmark = AGENT_TESTS
pytest.importorskip("openpyxl")
REPO = Path(__file__).resolve().parents[3]
SKILLOPT = Path(sys.executable).parent / "skillopt"


def target(agent, server, tmp_path):
    config = agent_config(agent, server, tmp_path, role={"max_retries": 0})
    return build_model_client(config, environ={}, retry_sleep=FakeSleep())


def skill(marker: str) -> str:
    return f"# How to answer\n\n{marker}: find the figure, then answer with it.\n"


@pytest.mark.parametrize("agent", AGENTS)
async def test_officeqa_item_through_the_real_agent(agent, tmp_path):
    env = officeqa_env(tmp_path, agent)
    item = env.load_split("val")[0]
    marker = f"SKILL-{uuid.uuid4().hex[:8]}"
    with SERVER[agent](OfficeQABrain(PROTOCOL[agent])) as server:
        client = target(agent, server, tmp_path)
        result = await env.rollout(item, skill(marker), client.bind_agent("target"))
        await client.aclose()
    assert marker in server.sent_text()  # the skill reached the agent's model
    # The figure came from the file through the real tools, and scored as the tool loop.
    assert (result.hard, result.prediction) == (1.0, "170,659 million dollars")
    calls = [m["content"] for m in result.trajectory if m["role"] == "tool_call"]
    assert any("Total public debt" in c for c in calls) and len(calls) >= 2
    assert result.input_tokens > 0 and result.error is None


@pytest.mark.parametrize("agent", AGENTS_SANDBOXED)
async def test_spreadsheetbench_item_through_the_real_agent(agent, tmp_path):
    env = sheets_env(tmp_path, agent)
    item = env.load_split("val")[0]
    marker = f"SKILL-{uuid.uuid4().hex[:8]}"
    with SERVER[agent](SpreadsheetBrain(PROTOCOL[agent])) as server:
        client = target(agent, server, tmp_path)
        result = await env.rollout(item, skill(marker), client.bind_agent("target"))
        await client.aclose()
    assert marker in server.sent_text()
    assert (result.hard, result.soft) == (1.0, 1.0), result.explanation
    diff = next(m["content"] for m in result.trajectory if m["role"] == "diff")
    assert "b/solve.py" in diff and "b/output.xlsx" in diff  # what the agent left


@pytest.mark.parametrize("agent", AGENTS)
async def test_an_officeqa_agent_cannot_read_the_answers_on_disk(agent, tmp_path):
    env = officeqa_env(tmp_path, agent)
    answers = tmp_path / "out" / "val" / "items.json"
    assert "170,659" in answers.read_text()
    with SERVER[agent](OfficeQABrain(PROTOCOL[agent], cheat=str(answers))) as server:
        client = target(agent, server, tmp_path)
        result = await env.rollout(env.load_split("val")[0], "", client.bind_agent("target"))
        await client.aclose()
    assert "170,659" not in json.dumps([r.body for r in server.model_requests])
    assert result.hard == 0.0 and result.prediction == "unknown"


@pytest.mark.parametrize("agent", AGENTS_SANDBOXED)
async def test_a_spreadsheet_agent_cannot_copy_the_answer_workbook(agent, tmp_path):
    env = sheets_env(tmp_path, agent)
    item = env.load_split("val")[0]
    answer = item.data["cases"][0]["answer"]
    with SERVER[agent](SpreadsheetBrain(PROTOCOL[agent], cheat=answer)) as server:
        client = target(agent, server, tmp_path)
        result = await env.rollout(item, "", client.bind_agent("target"))
        await client.aclose()
    tool_output = next(m["content"] for m in result.trajectory if m["role"] == "tool")
    assert "No such file" in tool_output or "denied" in tool_output.lower()
    assert result.hard == 0.0 and "saved no output.xlsx" in result.explanation


async def test_without_claude_codes_sandbox_a_spreadsheet_item_is_refused(tmp_path, monkeypatch):
    """A task that runs commands confined needs bubblewrap and socat: one clear line."""
    env = sheets_env(tmp_path, "claude_code")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with SERVER["claude_code"](SpreadsheetBrain("anthropic")) as server:
        client = target("claude_code", server, tmp_path)
        with pytest.raises(BadRequestError, match="apt install bubblewrap socat"):
            await env.rollout(env.load_split("val")[0], "", client.bind_agent("target"))
        await client.aclose()
    assert server.model_requests == []


@pytest.mark.parametrize("agent", AGENTS)
def test_skillopt_eval_runs_the_config_through_the_agent(agent, tmp_path):
    """The face builds the environment from models.target.backend: `skillopt eval` on
    officeqa with an agent backend runs the real agent, not the chat tool loop."""
    officeqa_env(tmp_path, agent)  # materialises the fixture data
    skill_file = tmp_path / "skill.md"
    skill_file.write_text(skill("SKILL-EVAL"))
    with SERVER[agent](OfficeQABrain(PROTOCOL[agent])) as server:
        role = {"backend": agent, "base_url": server.base_url, "model": MODEL[agent]}
        tree = {
            "env": {
                "name": "officeqa",
                "manifest_dir": str(tmp_path / "manifest"),
                "data_dir": str(tmp_path / "out"),
            },
            "models": {"target": {**role, "timeout_s": 60.0, "max_retries": 0}},
            "cache": {"path": str(tmp_path / "cache.sqlite")},
        }
        config = tmp_path / "eval.yaml"
        config.write_text(yaml.safe_dump(tree))
        environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        done = subprocess.run(
            [SKILLOPT, "eval", "--config", config, "--skill", skill_file, "--json"],
            cwd=REPO,
            env={**environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["hard"], result["n"]) == (1.0, 1)
    assert "SKILL-EVAL" in server.sent_text() and "Total public debt" in server.sent_text()
