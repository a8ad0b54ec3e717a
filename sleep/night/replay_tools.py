"""A tools replay: an agentic task replayed on an API (chat) backend as our own bounded tool
loop (core/agent_loop) in a fresh copy of the project at the task's start commit, the
candidate skill both where the source agent reads it and as the system prompt, a shell
only inside the bubblewrap jail (sleep/night/replay_shell.py).

Which tasks: those whose replay mode is `tools` (sleep/night/replay_modes.py: an agentic task on
an API backend).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.agent_loop.loop import LoopLimits, protocol_text, run_tool_loop
from core.agent_loop.tools import WorkspaceTools
from core.agent_loop.workspace import replay_workspace
from core.models.types import Message
from sleep.night.check_memo import for_diff
from sleep.night.history import seed_history
from sleep.night.replay_evidence import commands_in_calls
from sleep.night.replay_shell import jailed_shell
from sleep.night.routing import AGENTS_MD

STOPPED = {
    "turns": "stopped at the turn cap before finishing",
    "time": "stopped at the time cap before finishing",
}


def skill_path_for(agents: frozenset[str] | None) -> str:
    """Where the source agent reads the skill: AGENTS.md for Codex and other AGENTS.md
    readers, else CLAUDE.md."""
    return "AGENTS.md" if agents == frozenset({AGENTS_MD}) else "CLAUDE.md"


@dataclass(frozen=True)
class ToolReplay:
    """Where and how a tools replay works: the project (its tree at `commit`, or a plain
    copy when None), the skill's place in it, the loop's caps, and whether a jailed shell
    is offered when the jail works here."""

    project: Path
    commit: str | None
    skill_path: str = "CLAUDE.md"
    limits: LoopLimits = field(default_factory=LoopLimits)
    shell: bool = True


@dataclass(frozen=True)
class ToolRun:
    """What the loop did: the final message, the diff of the workspace, the trajectory
    (the messages, which hold every tool call and its result, then the diff), token usage
    and time."""

    final: str
    diff: str
    trajectory: list[Message]
    usage: tuple[int, int]
    latency_s: float
    stopped: str
    checked: Any = None  # what the replay's check returned (its command checks' results)
    # the shell commands it ran; None when it had no shell (a `ran` check cannot tell then)
    commands: list[str] | None = field(default_factory=list)


def task_prompt(tools: WorkspaceTools, intent: str, shell_problem: str) -> str:
    note = ""
    if tools.shell_runner is None:
        note = (
            f"No shell is available in this replay ({shell_problem}): you cannot run commands. "
            "Do what you can with the file tools, and say which commands you would run."
        )
    return f"{protocol_text(tools, shell_note=note)}\n\nTask: {intent}"


async def run_in_workspace(
    replay: ToolReplay,
    intent: str,
    skill_text: str,
    complete,
    *,
    check: Callable[[Path], Any] | None = None,
) -> ToolRun:
    """Replay one task; model errors propagate to the caller. `check(workspace)` runs in
    the workspace after the diff is taken (the task's command checks), before it goes."""
    started = time.monotonic()
    with replay_workspace(
        replay.project, replay.commit, skill_path=replay.skill_path, skill_text=skill_text
    ) as workspace:
        # a history-reading task's copy holds the history up to its start (history.py)
        seed_history(workspace.root, replay.project)
        shell, problem = jailed_shell(workspace.root) if replay.shell else (None, "turned off")
        tools = WorkspaceTools(workspace.root, shell=shell)
        outcome = await run_tool_loop(
            complete,
            tools,
            system=skill_text,
            task=task_prompt(tools, intent, problem),
            limits=replay.limits,
        )
        diff = await asyncio.to_thread(workspace.diff)
        checked = await asyncio.to_thread(for_diff(check, diff), workspace.root) if check else None
    final = outcome.final or f"(no final message: {STOPPED.get(outcome.stopped, outcome.stopped)})"
    trajectory = [
        *outcome.messages,
        {"role": "diff", "content": diff or "(no changes)"},
    ]
    usage = (
        sum(c.usage.input_tokens for c in outcome.completions),
        sum(c.usage.output_tokens for c in outcome.completions),
    )
    elapsed = time.monotonic() - started
    commands = commands_in_calls(outcome.calls) if tools.shell_runner is not None else None
    return ToolRun(final, diff, trajectory, usage, elapsed, outcome.stopped, checked, commands)
