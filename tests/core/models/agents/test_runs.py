"""Agent use of the coding-agent backends (`ModelClient.run_agent`) with the REAL binaries:
the skill reaches the agent for every placement, the agent really edits its workspace, the
trajectory has events + diff + exit status, a hung tool is killed with its whole process
group, and the workspace is removed unless kept."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import pytest

from core.models.agents.process import recorded_sessions
from core.models.factory import build_model_client
from core.models.types import AgentTask, BadRequestError, RetriesExhausted
from tests.core.models.helpers import FakeSleep
from tests.support.agent_clis import (
    AGENT_TESTS,
    AGENTS,
    PROTOCOL,
    SERVER,
    agent_config,
    shell_call,
    wait_for_processes,
)
from tests.support.loopback_agent_servers import Reply
from tests.support.repo_task_brain import RepoTaskBrain

pytestmark = AGENT_TESTS
PLACEMENTS = [
    ("claude_code", "claude_skill"),
    ("claude_code", "claude_md"),
    ("claude_code", "append_system_prompt"),
    ("codex", "agents_md"),
    ("codex", "codex_skill"),
]
TASKS = Path(__file__).resolve().parents[4] / "envs" / "repo_tasks" / "tasks"


def repo_task(check=None) -> AgentTask:
    """The real fix-mul task of repo_tasks (its prompt is what the brain recognises)."""
    import json

    row = json.loads((TASKS / "fix-mul" / "task.json").read_text())
    return AgentTask(
        prompt=row["prompt"],
        files=TASKS / "fix-mul" / "repo",
        skill_name="repo-tasks",
        check=check or (lambda ws: (ws / "CHANGELOG.md").read_text()),
    )


def client_for(agent, server, tmp_path, **role):
    config = agent_config(agent, server, tmp_path, role=role)
    return build_model_client(config, environ={}, retry_sleep=FakeSleep())


@pytest.mark.parametrize(("agent", "placement"), PLACEMENTS)
async def test_the_skill_reaches_the_agent_for_each_placement(agent, placement, tmp_path):
    marker = f"SKILL-MARKER-{uuid.uuid4().hex[:8]}"
    skill = f"# Repo tasks\n\n{marker}: every change adds a line to CHANGELOG.md.\n"
    with SERVER[agent](RepoTaskBrain(PROTOCOL[agent])) as server:
        client = client_for(agent, server, tmp_path, skill_placement=placement)
        outcome = await client.run_agent(repo_task(), skill, role="target")
        await client.aclose()
    assert marker in server.sent_text()  # what the real agent sent its model
    # The brain followed the skill, through the real agent's tools, in the workspace.
    assert "- calc.mul: fixed the bug" in outcome.check
    assert "+    return a * b" in outcome.diff and "+- calc.mul: fixed the bug" in outcome.diff
    assert outcome.exit_status == 0 and outcome.text == "done"
    assert outcome.events and outcome.usage.input_tokens > 0
    assert outcome.session_id in recorded_sessions()
    # The skill files we placed are ours, not the agent's changes.
    assert "SKILL.md" not in outcome.diff and "AGENTS.md" not in outcome.diff
    assert "CLAUDE.md" not in outcome.diff
    assert outcome.workspace is None
    assert (TASKS / "fix-mul" / "repo" / "calc.py").read_text().endswith("return a + b\n")


@pytest.mark.parametrize("agent", AGENTS)
async def test_an_empty_skill_is_placed_nowhere(agent, tmp_path):
    with SERVER[agent](RepoTaskBrain(PROTOCOL[agent])) as server:
        client = client_for(agent, server, tmp_path)
        outcome = await client.run_agent(repo_task(), "", role="target")
        await client.aclose()
    assert "repo-tasks" not in server.sent_text()
    assert "calc.mul" not in outcome.check  # no skill, no changelog line
    assert "+    return a * b" in outcome.diff


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_hung_tool_is_killed_with_the_whole_process_group(agent, tmp_path):
    # (Claude Code refuses a bare `sleep`; a Python sleep is a tool that just hangs.)
    marker = f"hang-{uuid.uuid4().hex[:12]}"
    hang = shell_call(agent, f"python3 -c 'import time; time.sleep(300)' {marker}")
    with SERVER[agent](replies=[hang]) as server:
        client = client_for(agent, server, tmp_path, timeout_s=6, max_retries=0)
        run = asyncio.create_task(client.run_agent(repo_task(), "", role="target"))
        started = await asyncio.to_thread(wait_for_processes, marker, present=True)
        with pytest.raises(RetriesExhausted) as err:
            await run
        await client.aclose()
    assert started, "the agent never ran the hanging tool"
    assert "its process group was killed" in str(err.value)
    # The tool the agent started died with it: nothing is left running.
    assert wait_for_processes(marker, present=False) == []


@pytest.mark.parametrize("agent", AGENTS)
async def test_the_workspace_is_kept_only_when_asked(agent, tmp_path):
    seen: list[Path] = []

    def check(workspace: Path) -> str:
        seen.append(workspace)
        return (workspace / "calc.py").read_text()

    with SERVER[agent](RepoTaskBrain(PROTOCOL[agent])) as server:
        client = client_for(agent, server, tmp_path)
        removed = await client.run_agent(repo_task(check), "", role="target")
        client_keep = client_for(agent, server, tmp_path, keep_workspace=True)
        kept = await client_keep.run_agent(repo_task(check), "", role="target")
        await client.aclose()
        await client_keep.aclose()
    assert "a * b" in removed.check and not seen[0].exists()
    assert kept.workspace == str(seen[1]) and (seen[1] / "calc.py").is_file()
    shutil.rmtree(seen[1])


async def test_claude_only_gets_the_allowed_tools(tmp_path):
    """An allowed_tools list is exactly what the agent is offered and may use unasked."""
    with SERVER["claude_code"](replies=[Reply("nothing to do")]) as server:
        client = client_for("claude_code", server, tmp_path, allowed_tools=["Read", "Grep"])
        await client.run_agent(repo_task(lambda ws: None), "", role="target")
        await client.aclose()
    # (DeferredToolPlaceholder is the CLI's internal stand-in, not a tool it can run.)
    tools = server.model_requests[0].body["tools"]
    offered = sorted(t["name"] for t in tools if t["name"] != "DeferredToolPlaceholder")
    assert offered == ["Grep", "Read"]


async def test_a_chat_backend_cannot_run_an_agent(tmp_path):
    from core.config import config_from_dict

    config = config_from_dict({"models": {"target": {"backend": "scripted"}}})
    client = build_model_client(
        config, scripted={"target": lambda r: "x"}, cache_path=tmp_path / "cache.sqlite"
    )
    with pytest.raises(BadRequestError, match="cannot run a coding agent"):
        await client.run_agent(repo_task(), "", role="target")
    await client.aclose()


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_project_at_a_recorded_commit_never_the_live_checkout(agent, tmp_path):
    from tests.support.skills_git import plain_git

    project = tmp_path / "project"
    project.mkdir()
    plain_git(project, "init", "-q")
    (project / "notes.txt").write_text("recorded\n")
    plain_git(project, "add", "-A")
    plain_git(project, "commit", "-qm", "recorded")
    recorded = plain_git(project, "rev-parse", "HEAD").strip()
    (project / "notes.txt").write_text("later\n")
    plain_git(project, "commit", "-qam", "later")
    (project / "notes.txt").write_text("uncommitted\n")
    task = AgentTask(
        prompt="Append a line to notes.txt.",
        files=project,
        skill_name="notes",
        check=lambda ws: (ws / "notes.txt").read_text(),
        commit=recorded,
    )
    edit = shell_call(agent, "echo edited >> notes.txt")
    with SERVER[agent](replies=[edit, Reply("done")]) as server:
        client = client_for(agent, server, tmp_path)
        outcome = await client.run_agent(task, "", role="target")
        await client.aclose()
    assert outcome.check == "recorded\nedited\n"
    assert " recorded\n+edited\n" in outcome.diff and ".git" not in outcome.diff
    assert (project / "notes.txt").read_text() == "uncommitted\n"
