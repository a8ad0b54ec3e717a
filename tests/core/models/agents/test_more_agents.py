"""pi, OpenCode and Copilot CLI as backends, with the REAL binaries (installed by `make
agents`) against a loopback Anthropic Messages server: a chat call carries the role's
system text and answers with its usage counted; an agent task really edits its workspace
(through the agent's own shell tool) with the skill where the agent reads it, the user's
files untouched; a 401 is an AuthError; a task that must stay inside its workspace is
refused before anything runs (none of the three can sandbox its shell)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from core.models.agents.failure import agent_failure
from core.models.agents.process import AGENTS_BIN
from core.models.factory import build_model_client
from core.models.types import (
    AgentTask,
    AuthError,
    BadRequestError,
    TransientError,
    UsageLimitReached,
)
from envs.agent_rollout import agent_trajectory
from tests.core.models.helpers import FakeSleep
from tests.support.agent_clis import agent_config
from tests.support.loopback_agent_servers import LoopbackMessagesSSE
from tests.support.loopback_openai import Fault, Reply
from tests.support.loopback_sse import ToolCall

MORE = ("pi", "opencode", "copilot")
pytestmark = [
    pytest.mark.agents,
    pytest.mark.skipif(
        not all((AGENTS_BIN / a).exists() for a in MORE),
        reason="pi, opencode and copilot are not installed: run `make agents`",
    ),
]
MODEL = "anthropic/claude-sonnet-4-5"
WRITE = "printf 'made by the agent\\n' > made.txt"
# Each agent's shell tool and the arguments it requires.
SHELL = {
    "pi": ToolCall("bash", {"command": WRITE}),
    "opencode": ToolCall("bash", {"command": WRITE, "description": "write made.txt"}),
    "copilot": ToolCall("bash", {"command": WRITE, "description": "write made.txt"}),
}


def tool_results(body: dict) -> bool:
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(c, dict) and c.get("type") == "tool_result" for c in content
    )


def brain(agent: str):
    """Text for a call without tools (chat use, OpenCode's title call); in agent use one
    shell call that writes made.txt, then "done"."""

    def answer(record):
        body = record.body or {}
        tools = {t.get("name") for t in body.get("tools", [])}
        if "bash" in tools and not tool_results(body):
            return SHELL[agent]
        return Reply("done" if tools else "PONG")

    return answer


def client_for(agent: str, server, tmp_path: Path, **role):
    role = {"model": MODEL, "binary": str(AGENTS_BIN / agent), "timeout_s": 60.0, **role}
    config = agent_config(agent, server, tmp_path, role=role)
    return build_model_client(config, environ={}, retry_sleep=FakeSleep())


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("print('hi')\n")
    return folder


@pytest.mark.parametrize("agent", MORE)
async def test_a_chat_call_answers_with_the_system_text_sent(agent, tmp_path):
    marker = f"SYSTEM-{uuid.uuid4().hex[:8]}"
    with LoopbackMessagesSSE(brain(agent)) as server:
        client = client_for(agent, server, tmp_path)
        messages = [{"role": "system", "content": f"{marker}: answer in one word."},
                    {"role": "user", "content": "ping?"}]  # fmt: skip
        done = await client.complete(messages, role="target")
        await client.aclose()
    assert done.text == "PONG"
    assert marker in server.sent_text()
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0


@pytest.mark.parametrize("agent", MORE)
async def test_an_agent_task_edits_its_workspace_with_the_skill_in_agents_md(
    agent, tmp_path, project
):
    marker = f"SKILL-{uuid.uuid4().hex[:8]}"
    task = AgentTask(
        prompt="write made.txt",
        files=project,
        skill_name="proj",
        check=lambda ws: (ws / "made.txt").read_text(),
    )
    with LoopbackMessagesSSE(brain(agent)) as server:
        client = client_for(agent, server, tmp_path)
        outcome = await client.run_agent(task, f"# Notes\n\n{marker}\n", role="target")
        await client.aclose()
    assert marker in server.sent_text()  # AGENTS.md reached the model
    assert outcome.check == "made by the agent\n"
    assert "+made by the agent" in outcome.diff and "AGENTS.md" not in outcome.diff
    assert outcome.text == "done" and outcome.exit_status == 0
    assert sorted(p.name for p in project.iterdir()) == ["app.py"]  # the user's files
    # the run had no sandbox, and its trajectory says so
    assert outcome.unconfined.startswith(f"{agent} has no sandbox")
    assert "unconfined: " in agent_trajectory(task.prompt, outcome)[-1]["content"]


# One real 401 (pi's run is the quickest); how each agent's failure message maps to the
# typed errors is tested without a process below.
@pytest.mark.parametrize("agent", ["pi"])
async def test_a_rejected_key_is_an_auth_error(agent, tmp_path):
    with LoopbackMessagesSSE(lambda r: Fault.error(401, message="invalid x-api-key")) as server:
        client = client_for(agent, server, tmp_path, max_retries=0)
        with pytest.raises(AuthError) as caught:
            await client.complete([{"role": "user", "content": "ping?"}], role="target")
        await client.aclose()
    assert agent.lower() in str(caught.value).lower() and "\n" not in str(caught.value)


@pytest.mark.parametrize("agent", MORE)
async def test_a_task_confined_to_its_workspace_is_refused(agent, tmp_path, project):
    task = AgentTask(
        prompt="solve it", files=project, skill_name="p", check=lambda ws: None,
        workspace_only=True,
    )  # fmt: skip
    with LoopbackMessagesSSE(brain(agent)) as server:
        client = client_for(agent, server, tmp_path)
        with pytest.raises(BadRequestError, match="cannot keep the agent inside"):
            await client.run_agent(task, "# skill\n", role="target")
        await client.aclose()
    assert server.model_requests == []


@pytest.mark.parametrize(
    ("text", "status", "error"),
    [
        ("bad key", 401, AuthError),  # OpenCode's error event, Copilot's session.error
        ("Authentication failed with provider (HTTP 401).", None, AuthError),  # pi's message
        ("rate limited", 429, TransientError),
        ("overloaded", 529, TransientError),
        ("model not found", 404, BadRequestError),
        ("Connection error.", None, TransientError),
        ("You hit your usage limit", 429, UsageLimitReached),
    ],
)
def test_each_agents_failure_is_the_typed_error(text, status, error):
    failure = agent_failure("OpenCode", text, status, "ANTHROPIC_API_KEY")
    assert type(failure) is error and "\n" not in str(failure)
