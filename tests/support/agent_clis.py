"""Shared bits for tests that drive the real `claude` and `codex` binaries (installed by
`make agents` into .tools/agents/, see shared AGENT-CLIS.md) against loopback servers."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from core.config import Config, config_from_dict
from core.models.agents.process import AGENTS_BIN
from tests.support.loopback_agent_servers import LoopbackMessagesSSE, LoopbackResponsesSSE

AGENTS = ("claude_code", "codex")
PROGRAM = {"claude_code": "claude", "codex": "codex", "pi": "pi", "opencode": "opencode",
           "copilot": "copilot"}  # fmt: skip
SERVER = {"claude_code": LoopbackMessagesSSE, "codex": LoopbackResponsesSSE}
PROTOCOL = {"claude_code": "anthropic", "codex": "openai"}
# Codex needs a model name; Claude Code has a default.
MODEL = {"claude_code": None, "codex": "local-model", "pi": "anthropic/claude-sonnet-4-5",
         "opencode": "anthropic/claude-sonnet-4-5", "copilot": "anthropic/claude-sonnet-4-5"}  # fmt: skip
# The tool a scripted brain calls to run a shell command, per agent.
SHELL_TOOL = {"claude_code": "Bash", "codex": "exec_command"}

requires_agents = pytest.mark.skipif(
    not all((AGENTS_BIN / PROGRAM[a]).exists() for a in AGENTS),
    reason="the agent CLIs are not installed: run `make agents`",
)
# For modules of such tests: skipped without the CLIs, deselectable with `-m "not agents"`.
AGENT_TESTS = [pytest.mark.agents, requires_agents]
# Claude Code confined to its workspace while it runs commands uses its own sandbox, which
# needs bubblewrap and socat on PATH (core/models/agent_confinement.py).
requires_claude_sandbox = pytest.mark.skipif(
    not (shutil.which("bwrap") and shutil.which("socat")),
    reason="Claude Code's sandbox needs bubblewrap and socat: apt install bubblewrap socat",
)
# AGENTS for a test whose Claude Code run is confined and runs commands.
AGENTS_SANDBOXED = [pytest.param("claude_code", marks=requires_claude_sandbox), "codex"]


def shell_call(agent: str, command: str):
    from tests.support.loopback_agent_servers import ToolCall

    if agent == "claude_code":
        return ToolCall("Bash", {"command": command, "description": "run it"})
    return ToolCall("exec_command", {"cmd": command})


def agent_config(
    agent: str, server, tmp_path: Path, *, role: dict[str, Any] | None = None, **tree: Any
) -> Config:
    """A config whose target role is `agent` at the loopback `server` (no key: a custom
    server gets none), retries without waiting long, cache in tmp_path."""
    target = {
        "backend": agent,
        "base_url": server.base_url,
        "model": MODEL[agent],
        "binary": str(AGENTS_BIN / PROGRAM[agent]),
        "timeout_s": 30.0,
        "max_retries": 2,
    }
    target.update(role or {})
    data: dict[str, Any] = {
        "run": {"runs_dir": str(tmp_path / "runs")},
        "models": {"target": target},
        "cache": {"path": str(tmp_path / "cache.sqlite")},
    }
    data.update(tree)
    return config_from_dict(data)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for_processes(marker: str, *, present: bool, timeout_s: float = 20.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        pids = processes_with(marker)
        if bool(pids) == present or time.monotonic() > deadline:
            return pids
        time.sleep(0.1)


def fake_claude_login(home: Path) -> Path:
    """A Claude Code subscription login as the CLI stores it (a dummy OAuth token)."""
    folder = home / ".claude"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".credentials.json"
    expires = int((time.time() + 86_400) * 1000)
    path.write_text(
        json.dumps(
            {
                "claudeAiOauth": {
                    "accessToken": "sk-ant-oat01-dummy-test-token",
                    "refreshToken": "sk-ant-ort01-dummy-test-token",
                    "expiresAt": expires,
                    "scopes": ["user:inference", "user:profile"],
                    "subscriptionType": "max",
                }
            }
        )
    )
    return path
