"""What a replay did, as the mined checks read it (sleep/mine/tasks.py `ReplayEvidence`).

The final reply and the diff come with every workspace replay; the commands the agent ran
are read from its run: a coding agent's event stream (Claude Code's Bash tool calls,
Codex's command executions) or our tool loop's shell calls. A handoff answered by the
person's own agent shows no commands: only those its reply declares, each run again by the
night and counted when it passes (sleep/night/declared_commands.py); a reply that declares
none says nothing (None), rather than failing work it cannot see. The project's own top-level modules are listed so an
import of one is not counted as a new dependency.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sleep.harvest.session_evidence import shell_command
from sleep.mine.tasks import ReplayEvidence

_MAX_MODULES = 500


def commands_in_events(events: list[dict[str, Any]]) -> list[str]:
    """The shell commands of a Claude Code or Codex run's events, in order."""
    out: list[str] = []
    for event in events:
        if event.get("type") == "assistant":
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    command = shell_command(str(block.get("name", "")), block.get("input"))
                    if command:
                        out.append(command)
        item = event.get("item") if event.get("type") == "item.completed" else None
        if (
            isinstance(item, dict)
            and item.get("type") == "command_execution"
            and isinstance(item.get("command"), str)
        ):
            out.append(item["command"])
    return out


def commands_in_calls(calls: list[dict[str, Any]]) -> list[str]:
    """The shell commands of our tool loop's calls (core/agent_loop)."""
    return [
        c["arguments"]["command"]
        for c in calls
        if c.get("name") == "shell"
        and isinstance(c.get("arguments"), dict)
        and isinstance(c["arguments"].get("command"), str)
    ]


def local_modules(project: Path | None) -> frozenset[str]:
    """The names the project's own code imports itself by: its top-level Python files
    and packages, and those under src/."""
    if project is None:
        return frozenset()
    names: set[str] = set()
    for folder in (project, project / "src"):
        try:
            entries = sorted(folder.iterdir())[:_MAX_MODULES]
        except OSError:
            continue
        for entry in entries:
            if entry.suffix == ".py":
                names.add(entry.stem)
            elif entry.is_dir() and not entry.name.startswith("."):
                names.add(entry.name)
    return frozenset(names)


def evidence(
    reply: str, diff: str | None, commands: list[str] | None, project: Path | None = None
) -> ReplayEvidence:
    return ReplayEvidence(reply, diff, commands, local_modules(project))
