"""A task confined to its workspace (`AgentTask.workspace_only`): what each CLI is told
(unit), and, with the REAL binaries, that the agent can neither read nor write outside the
workspace by any of its tools, while the workspace and the task's `readable` folders work.
The scripted model asks for each escape in turn; the files outside are ours, in tmp_path."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from core.models.agents.confinement import (
    claude_confinement_args,
    claude_settings,
    claude_tools,
    codex_confinement_args,
    install_root,
)
from core.models.factory import build_model_client
from core.models.types import AgentTask, BadRequestError
from tests.core.models.helpers import FakeSleep
from tests.support.agent_clis import (
    AGENTS_SANDBOXED,
    SERVER,
    agent_config,
    requires_agents,
    shell_call,
)
from tests.support.loopback_agent_servers import Reply, ToolCall

CLAUDE_DEFAULT = ("Read", "Write", "Edit", "Bash", "Glob", "Grep", "Skill")


def task(tmp_path: Path, **fields) -> AgentTask:
    files = tmp_path / "files"
    files.mkdir(exist_ok=True)
    (files / "notes.txt").write_text("inside\n")
    return AgentTask(
        prompt="Do the task.",
        files=files,
        skill_name="t",
        check=lambda ws: sorted(p.name for p in ws.iterdir() if not p.name.startswith(".")),
        workspace_only=True,
        **fields,
    )


# ---------------------------------------------------------------------------------- unit
def test_claude_without_a_shell_gets_the_file_tools_and_no_sandbox(tmp_path):
    confined = task(tmp_path, shell=False)
    tools = claude_tools(confined, None, CLAUDE_DEFAULT)
    assert tools == ["Read", "Glob", "Grep", "Skill"]
    settings = claude_settings(confined, tools)
    assert settings["permissions"] == {
        "blockReadsOutsideWorkingDirectories": True,
        "blockWritesOutsideWorkingDirectories": True,
    }
    assert "sandbox" not in settings
    # No sandbox is needed, so no bubblewrap either.
    assert claude_confinement_args(confined, tools, path="")[0] == "--settings"


def test_claude_with_a_shell_gets_its_sandbox_reading_only_what_it_needs(tmp_path):
    confined = task(tmp_path, readable=(Path("/opt/python"),))
    tools = claude_tools(confined, None, CLAUDE_DEFAULT)
    sandbox = claude_settings(confined, tools)["sandbox"]
    assert sandbox["failIfUnavailable"] and not sandbox["allowUnsandboxedCommands"]
    assert sandbox["filesystem"]["denyRead"] == ["/"]
    assert "/opt/python" in sandbox["filesystem"]["allowRead"]
    assert str(tmp_path) not in json.dumps(sandbox)
    with pytest.raises(BadRequestError, match="bwrap and socat not found"):
        claude_confinement_args(confined, tools, path=str(tmp_path))
    unconfined = AgentTask("p", tmp_path, "t", check=lambda ws: None)
    assert claude_confinement_args(unconfined, tools, path="") == []


def test_codex_gets_a_profile_reading_only_its_install_and_the_readable(tmp_path):
    binary = tmp_path / "lib" / "node_modules" / "@openai" / "codex" / "bin" / "codex.js"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    link = tmp_path / "bin" / "codex"
    link.parent.mkdir()
    link.symlink_to(binary)
    assert install_root(link) == tmp_path / "lib" / "node_modules"
    args = codex_confinement_args(task(tmp_path, readable=(Path("/opt/py"),)), link)
    assert args[:2] == ["-c", 'default_permissions="skillopt"']
    profile = args[3]
    assert profile.startswith("permissions.skillopt.filesystem={")
    assert '":minimal"="read"' in profile and '"/opt/py"="read"' in profile
    assert f'"{tmp_path / "lib" / "node_modules"}"="read"' in profile
    assert '":workspace_roots"={"."="write"}' in profile and "-s" not in args


@pytest.mark.parametrize("agent", ["claude_code", "codex"])
async def test_bypassing_permissions_is_refused_for_a_confined_task(agent, tmp_path):
    from core.config import config_from_dict

    # Refused before any process starts: any executable stands in for the CLI.
    role = {"backend": agent, "binary": sys.executable, "bypass_permissions": True}
    role |= {"base_url": "http://127.0.0.1:9", "model": "m", "max_retries": 0}
    client = build_model_client(
        config_from_dict({"models": {"target": role}}),
        environ={},
        cache_path=tmp_path / "cache.sqlite",
    )
    with pytest.raises(BadRequestError, match="bypass_permissions cannot be used here"):
        await client.run_agent(task(tmp_path), "", role="target")
    await client.aclose()


# ------------------------------------------------------------------------- the real CLIs
@pytest.fixture
def outside(tmp_path):
    """A secret to read, a folder to write into, and a folder the task may read."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "answers.txt").write_text("SECRET-ANSWER-42\n")
    (tmp_path / "target").mkdir()
    readable = tmp_path / "shared"
    readable.mkdir()
    (readable / "ok.txt").write_text("SHARED-OK\n")
    return secret / "answers.txt", tmp_path / "target", readable


def escapes(agent: str, secret: Path, target: Path, readable: Path) -> list:
    python = sys.executable
    steal = f"print(open({str(secret)!r}).read())"
    plant = f"open({str(target / 'py.txt')!r}, 'w').write('x')"
    steps = []
    if agent == "claude_code":
        steps += [
            ToolCall("Read", {"file_path": str(secret)}),
            ToolCall("Grep", {"pattern": "SECRET", "path": str(secret.parent)}),
            ToolCall("Write", {"file_path": str(target / "w.txt"), "content": "x"}),
            ToolCall("Write", {"file_path": "steal.py", "content": steal}),
            ToolCall("Write", {"file_path": "plant.py", "content": plant}),
        ]
    else:
        steps += [
            shell_call(agent, f"cat > steal.py <<'EOF'\n{steal}\nEOF"),
            shell_call(agent, f"cat > plant.py <<'EOF'\n{plant}\nEOF"),
        ]
    steps += [
        shell_call(agent, f"cat {secret}"),
        shell_call(agent, f"{python} steal.py"),
        shell_call(agent, f"{python} plant.py"),
        shell_call(agent, f"echo x > {target / 'sh.txt'}"),
        shell_call(agent, f"cat {readable / 'ok.txt'}; cat notes.txt; echo made > made.txt"),
        Reply("done"),
    ]
    return steps


async def run(agent, server, tmp_path, confined_task):
    config = agent_config(agent, server, tmp_path, role={"max_retries": 0})
    client = build_model_client(config, environ={}, retry_sleep=FakeSleep())
    try:
        return await client.run_agent(confined_task, "", role="target")
    finally:
        await client.aclose()


@pytest.mark.agents
@requires_agents
@pytest.mark.parametrize("agent", AGENTS_SANDBOXED)
@pytest.mark.parametrize("confined", [True, False], ids=["confined", "unconfined-control"])
async def test_no_tool_reaches_outside_the_workspace(agent, confined, tmp_path, outside):
    secret, target, readable = outside
    # The control runs the same escapes on an unconfined task: there they work.
    the_task = replace(task(tmp_path, readable=(readable,)), workspace_only=confined)
    with SERVER[agent](replies=escapes(agent, secret, target, readable)) as server:
        outcome = await run(agent, server, tmp_path, the_task)
    sent = server.sent_text()
    if confined:
        assert "SECRET-ANSWER-42" not in sent and list(target.iterdir()) == []
        assert outcome.unconfined == ""
    else:
        assert "SECRET-ANSWER-42" in sent and list(target.iterdir()) != []
        assert "could read" in outcome.unconfined or "not its reads" in outcome.unconfined
    # The workspace itself, and the readable folder, work as usual.
    assert "SHARED-OK" in sent and "inside" in sent
    assert "made.txt" in outcome.check and outcome.text == "done"


@pytest.mark.agents
@requires_agents
async def test_claude_without_a_shell_is_offered_no_shell(tmp_path, outside):
    secret, _, _ = outside
    steps = [
        ToolCall("Read", {"file_path": str(secret)}),
        ToolCall("Read", {"file_path": "notes.txt"}),
    ]
    with SERVER["claude_code"](replies=[*steps, Reply("done")]) as server:
        await run("claude_code", server, tmp_path, task(tmp_path, shell=False))
    offered = {t["name"] for t in server.model_requests[0].body["tools"]}
    assert "Bash" not in offered and {"Read", "Grep", "Glob"} <= offered
    sent = server.sent_text()
    assert "SECRET-ANSWER-42" not in sent and "inside" in sent
