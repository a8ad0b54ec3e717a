"""Issue 37: with a coding agent as the target, a `ran` check still reads the commands the
agent really ran from its own event stream, never what its final message claims. The
REAL `claude` binary (Claude Code) replays the task in a copy of a real git project; its
brain is a scripted loopback Anthropic server (TEST DOUBLE) that runs `make test` with the
agent's Bash tool, or does not and only writes that it did. The judge is the scripted
TEST DOUBLE of tests/sleep/night_checks_world (0.9 for every reply)."""

from __future__ import annotations

import json

from core.config import config_from_dict
from core.models.agents.process import AGENTS_BIN
from core.models.factory import build_model_client
from sleep.mine.tasks import Check, MinedTask
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from tests.support.agent_clis import AGENT_TESTS
from tests.support.loopback_agent_servers import LoopbackMessagesSSE, Reply, ToolCall
from tests.support.skills_git import plain_git as git

pytestmark = AGENT_TESTS
CLAIM = "Validated total().\n\nCommands run:\n    make test\n"


def brain(runs_the_tests: bool):
    def reply(record) -> Reply | ToolCall:
        messages = record.body.get("messages", []) if isinstance(record.body, dict) else []
        answered = any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for m in messages
            if isinstance(m.get("content"), list)
            for block in m["content"]
        )
        if runs_the_tests and not answered:
            return ToolCall("Bash", {"command": "make test", "description": "run the tests"})
        return Reply(CLAIM)

    return reply


async def replayed(tmp_path, runs_the_tests: bool):
    project = tmp_path / "notes-app"
    project.mkdir()
    (project / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    (project / "Makefile").write_text("test:\n\t@echo tests pass\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    head = git(project, "rev-parse", "HEAD").strip()
    task = MinedTask(
        "t-ran", "add input validation to total()", str(project), kind="agentic",
        rubric="total() rejects negative numbers", checks=[Check("ran", r"\bmake\s+test\b")],
    )  # fmt: skip
    with LoopbackMessagesSSE(brain(runs_the_tests)) as server:
        roles = {"judge": {"backend": "scripted",
                           "model": "tests.sleep.night_checks_world:judge_says_fixed"}}  # fmt: skip
        roles["target"] = {
            "backend": "claude_code", "base_url": server.base_url,
            "binary": str(AGENTS_BIN / "claude"), "skill_placement": "claude_md",
            "timeout_s": 90.0, "max_retries": 1,
        }  # fmt: skip
        client = build_model_client(config_from_dict({"models": roles}))
        try:
            env = ReplayEnvironment(
                {"val": [task]}, client.bind("judge"),
                agent=AgentReplay(project, head, "notes-app"), target_backend="claude_code",
            )  # fmt: skip
            [item] = env.load_split("val")
            return await env.rollout(item, "# Notes\n", client.bind_agent("target"))
        finally:
            await client.aclose()


async def test_the_real_claude_s_make_test_is_read_from_its_events(tmp_path):
    result = await replayed(tmp_path, runs_the_tests=True)
    assert "mined checks 1/1 passed" in result.explanation, result.explanation
    assert "make test" in json.dumps(result.trajectory)


async def test_a_claim_in_the_real_claude_s_message_is_not_a_command_it_ran(tmp_path):
    result = await replayed(tmp_path, runs_the_tests=False)
    assert result.prediction.startswith("Validated total().")
    assert "mined checks 0/1 passed" in result.explanation, result.explanation
