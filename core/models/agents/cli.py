"""What the two coding-agent CLI backends share: how a role reaches its model (settings
resolved by the factory), how chat messages become one prompt, and how the user's login is
lent to a private HOME.

Why a login is *copied*: each call runs with a private HOME so that nothing of ours lands
in the user's agent config or history. A subscription user has no API key, only the CLI's
credentials file; a copy of that one file (mode 0600, removed with the private HOME) lets
the call authenticate without the CLI ever writing to the user's own directory. A token
the CLI refreshes during the call is refreshed in the copy only.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.models.agents.process import private_home
from core.models.agents.workspace import (
    Placement,
    fresh_workspace,
    place_skill,
    pristine_tree,
    resolve_placement,
    workspace_diff,
)
from core.models.anthropic_backend import split_system
from core.models.openai_backend import OPENAI_SETTINGS
from core.models.types import AgentOutcome, AgentTask, BadRequestError, Completion, Request

JSON_ONLY = "Reply with one JSON object only, no prose and no code fence."
# Chat use replaces the agent's coding persona: a role asked for text gets text.
CHAT_SYSTEM = "Answer the user's message directly and completely, as text."


@dataclass(frozen=True)
class AgentSettings:
    """One role's resolved CLI settings (config keys of the same names)."""

    binary: Path
    model: str  # "" = the CLI's own default model
    base_url: str | None = None
    api_key: str | None = None  # the value (never logged); None = the CLI's own login
    credential: str = ""  # where the key came from, for messages
    max_turns: int | None = None
    extra_args: tuple[str, ...] = ()
    skill_placement: str = "auto"
    allowed_tools: tuple[str, ...] | None = None
    bypass_permissions: bool = False
    keep_workspace: bool = False
    timeout_s: float = 60.0  # the process deadline (the client waits a little longer)
    environ: Mapping[str, str] = field(default_factory=dict)  # the user's env (for logins)


def chat_prompt(request: Request) -> tuple[str, str]:
    """(system text, prompt) for one non-interactive call. One user turn is sent as is;
    a longer conversation is written out turn by turn."""
    unknown = set(request.settings) - OPENAI_SETTINGS
    if unknown:
        raise BadRequestError(f"unknown model setting(s): {', '.join(sorted(unknown))}")
    system, turns = split_system(request.messages)
    if request.settings.get("response_format"):
        system = f"{system}\n\n{JSON_ONLY}" if system else JSON_ONLY
    if not turns:
        raise BadRequestError("a coding-agent call needs at least one user message")
    if len(turns) == 1 and turns[0]["role"] == "user":
        return system, content_text(turns[0]["content"])
    lines = ["The conversation so far (answer as the assistant, to the last user turn):"]
    for turn in turns:
        lines.append(f"\n[{turn['role']}]\n{content_text(turn['content'])}")
    return system, "\n".join(lines)


def content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p.get("text", "")) for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if p)
    return json.dumps(content)


def lend_login(source: Path, target: Path) -> bool:
    """Copy one credentials file into a private config dir; False if there is none."""
    if not source.is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    target.chmod(0o600)
    return True


def parse_events(stdout: str) -> list[dict[str, Any]]:
    """One JSON object per line; lines that are not JSON objects are skipped."""
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def tail(text: str, limit: int = 300) -> str:
    """The last meaningful part of a CLI's output, on one line."""
    return " ".join(text.split())[-limit:]


@dataclass(frozen=True)
class Invocation:
    """One finished CLI process: its JSON events, exit status, duration and session id."""

    events: list[dict[str, Any]]
    returncode: int
    duration_s: float
    session_id: str


class AgentCli(Protocol):
    """What `run_agent_task` needs of a CLI backend."""

    name: str
    settings: AgentSettings
    setting: str

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]: ...

    async def invoke(
        self,
        prompt: str,
        *,
        args: list[str],
        cwd: Path,
        home: Path,
        timeout_s: float,
        purpose: str,
    ) -> Invocation: ...

    def completion(self, invocation: Invocation) -> Completion: ...


class AgentBackend:
    """What every agent backend shares: its settings, the config prefix for messages, and
    agent use through `run_agent_task` (a subclass gives `agent_args`, `invoke`,
    `completion`, and `send` for chat use)."""

    name = ""

    def __init__(self, settings: AgentSettings, *, setting: str = "models.target"):
        self.settings = settings
        self.setting = setting  # config prefix, for messages

    async def run_agent(self, task: AgentTask, skill_text: str, *, timeout_s: float):
        return await run_agent_task(self, task, skill_text, timeout_s=timeout_s)

    async def aclose(self) -> None:
        return None


async def run_chat(cli: AgentCli, request: Request, *, timeout_s: float, system_args) -> Completion:
    """Chat use, the same for every CLI: one call in an empty work folder of a private
    home, the role's system text (or ours) in a file whose flags `system_args(path)`
    gives together with the CLI's no-tools / read-only switches."""
    system, prompt = chat_prompt(request)
    with private_home(cli.name) as home:
        system_file = home / "system-prompt.md"
        system_file.write_text(system or CHAT_SYSTEM, encoding="utf-8")
        workdir = home / "work"
        workdir.mkdir()
        run = await cli.invoke(
            prompt,
            args=system_args(system_file),
            cwd=workdir,
            home=home,
            timeout_s=min(timeout_s, cli.settings.timeout_s),
            purpose="chat",
        )
    return cli.completion(run)


async def run_agent_task(
    cli: AgentCli, task: AgentTask, skill_text: str, *, timeout_s: float
) -> AgentOutcome:
    """Agent use: a fresh workspace with the skill placed, one agent run, the diff, then
    the task's check in the same workspace; the workspace goes unless kept."""
    s = cli.settings
    placement_kind = resolve_placement(cli.name, s.skill_placement, setting=cli.setting)
    with (
        pristine_tree(task.files, task.commit) as original,
        fresh_workspace(original.root, keep=s.keep_workspace) as workspace,
    ):
        with private_home(cli.name) as home:
            placement = place_skill(workspace, placement_kind, task.skill_name, skill_text)
            run = await cli.invoke(
                task.prompt,
                args=cli.agent_args(placement, task),
                cwd=workspace,
                home=home,
                timeout_s=min(timeout_s, s.timeout_s),
                purpose="agent",
            )
        completion = cli.completion(run)
        diff = workspace_diff(original.root, workspace, placement)
        # The check runs commands (tests, greps): off the event loop.
        checked = await asyncio.to_thread(task.check, workspace)
    return AgentOutcome(
        text=completion.text,
        events=run.events,
        diff=diff,
        exit_status=run.returncode,
        usage=completion.usage,
        latency_s=completion.latency_s,
        model=completion.model,
        session_id=run.session_id,
        check=checked,
        finish_reason=completion.finish_reason,
        workspace=str(workspace) if s.keep_workspace else None,
        unconfined="" if task.workspace_only else unconfined_note(cli.name),
        left_out=original.left_out,
    )


# Agents whose CLI has no sandbox for its shell (they refuse workspace-only tasks).
NO_SANDBOX = ("pi", "opencode", "copilot")


def unconfined_note(agent: str) -> str:
    """What a run outside a sandbox could reach, for the trajectory."""
    if agent in NO_SANDBOX:
        return f"{agent} has no sandbox: the agent could read and change anything you can"
    if agent == "codex":  # -s workspace-write
        return "codex's sandbox bounded its writes to the workspace, not its reads"
    return "no sandbox was asked for: the agent could read and change anything you can"
