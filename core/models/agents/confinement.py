"""Keeping a coding agent inside its workspace (`AgentTask.workspace_only`) with each CLI's
own sandbox, for tasks whose answers sit on the same disk (benchmark data) or that must not
touch anything else of the user's.

What the pinned CLIs guarantee, checked with the real binaries
(tests/core/models/agents/test_confinement.py):

Claude Code 2.1.328. The default agent flags (`--allowedTools Read,Write,Bash,...` with
`dontAsk`) let the agent read and write anything the user can. Confined:
  - `permissions.blockReadsOutsideWorkingDirectories` and `...Writes...` (passed with
    `--settings`): Read, Grep, Glob, Write and Edit refuse any path outside the workspace,
    and a shell command that names such a path is refused;
  - a program the agent runs (`python3 solve.py`) is not checked by those, so a task with a
    shell also gets Claude Code's sandbox (bubblewrap + socat on Linux): every command runs
    with reads denied outside the workspace, the task's `readable` folders and the system
    folders below, writes only in the workspace, no network, and no unsandboxed retry
    (`allowUnsandboxedCommands: false`). `failIfUnavailable`: no sandbox, no run;
  - a task without a shell gets the file tools only, and needs no sandbox.

Codex 0.169.0. `-s workspace-write` confines writes (the workspace and /tmp) but not reads.
Confined: a permission profile (`default_permissions`) that reads only Codex's `:minimal`
system set, its own install and the task's `readable` folders, and writes only the
workspace; its bubblewrap sandbox enforces that for every command. (Codex loads AGENTS.md
through a sandboxed helper it links under CODEX_HOME, which it refuses to do inside the
temporary directory: the backend points TMPDIR into the private home.)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.models.types import AgentTask, BadRequestError

# Folders a sandboxed command may read besides the workspace: what a shell and an
# interpreter need to start (binaries, libraries, /etc for the loader and locale).
SYSTEM_READABLE = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/dev")
# Claude Code's tools for a task that runs no commands.
CLAUDE_FILE_TOOLS = ("Read", "Glob", "Grep", "Skill")
CLAUDE_SANDBOX_NEEDS = ("bwrap", "socat")
CODEX_PROFILE = "skillopt"  # a bare key: `-c` splits its key path on dots


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, given non-ASCII kept as is)."""
    return json.dumps(text, ensure_ascii=False)


def refuse_bypass(task: AgentTask, bypass: bool, setting: str) -> None:
    if task.workspace_only and bypass:
        raise BadRequestError(
            f"{setting}.bypass_permissions cannot be used here: this task confines the agent "
            "to its workspace (its answers are on this disk); remove bypass_permissions"
        )


# ---------------------------------------------------------------------------- Claude Code
def claude_tools(task: AgentTask, allowed: Sequence[str] | None, default: Sequence[str]):
    """The tools offered: the user's list, else the file tools for a task without a shell,
    else the backend's default editing set."""
    if allowed is not None:
        return list(allowed)
    return list(CLAUDE_FILE_TOOLS if not task.shell else default)


def claude_settings(task: AgentTask, tools: Sequence[str]) -> dict[str, Any]:
    """The `--settings` object that confines a Claude Code run to its working directory."""
    settings: dict[str, Any] = {
        "permissions": {
            "blockReadsOutsideWorkingDirectories": True,
            "blockWritesOutsideWorkingDirectories": True,
        }
    }
    if "Bash" in tools:
        settings["sandbox"] = {
            "enabled": True,
            "failIfUnavailable": True,
            "autoAllowBashIfSandboxed": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {
                "denyRead": ["/"],
                "allowRead": [*SYSTEM_READABLE, *(str(p) for p in task.readable)],
            },
        }
    return settings


def claude_confinement_args(task: AgentTask, tools: Sequence[str], *, path: str | None) -> list:
    """`--settings` for a confined task (none for an unconfined one). A task whose tools
    include Bash needs Claude Code's sandbox: its dependencies are checked on `path` (the
    PATH the CLI runs with) so that a missing one is one clear line, not a failed run."""
    if not task.workspace_only:
        return []
    if "Bash" in tools:
        missing = [p for p in CLAUDE_SANDBOX_NEEDS if shutil.which(p, path=path) is None]
        if missing:
            raise BadRequestError(
                f"this task confines Claude Code to its workspace and runs commands, which "
                f"needs Claude Code's sandbox; {' and '.join(missing)} not found: install "
                "them (Debian/Ubuntu: apt install bubblewrap socat), or use the codex backend"
            )
    return ["--settings", json.dumps(claude_settings(task, tools))]


# ---------------------------------------------------------------------------------- Codex
def install_root(binary: Path) -> Path:
    """The folder holding a CLI's npm install (its launcher and the native binary the
    sandbox re-executes): the nearest `node_modules` above the resolved binary, else the
    binary's own folder."""
    resolved = Path(binary).resolve()
    for parent in resolved.parents:
        if parent.name == "node_modules":
            return parent
    return resolved.parent


def codex_confinement_args(task: AgentTask, binary: Path) -> list[str]:
    """Codex's arguments for a confined task: the permission profile in place of `-s`."""
    reads = {":minimal": "read", str(install_root(binary)): "read"}
    reads.update({str(Path(p)): "read" for p in task.readable})
    entries = [f"{toml_string(k)}={toml_string(v)}" for k, v in reads.items()]
    entries.append('":workspace_roots"={"."="write"}')
    return [
        "-c",
        f"default_permissions={toml_string(CODEX_PROFILE)}",
        "-c",
        f"permissions.{CODEX_PROFILE}.filesystem={{{','.join(entries)}}}",
    ]


# ---------------------------------------------------------------------- pi, opencode, copilot
def refuse_unconfined(task: AgentTask, agent: str, setting: str) -> None:
    """pi, OpenCode and Copilot CLI have no sandbox that bounds what their shell reads
    (OpenCode's and Copilot's path checks cover their file tools only): a task whose
    answers are on this disk cannot run on them."""
    if task.workspace_only:
        raise BadRequestError(
            f"{setting}: {agent} cannot keep the agent inside its workspace (its shell reads "
            "anything the user can), and this task's answers are on this disk; use "
            "claude_code or codex for it"
        )
