"""The files a turn read, so a question about the code can be replayed with that code.

Why: a question about the project with no change asked for ("are nulls dropped or
kept?") is replayed as a chat call, which has no files. Its session's agent read the code
to answer it; without that code a correct answer is not possible and the replay fails on
what it was not given. So the harvest keeps, per prompt, the paths the agent read (never
their content: the night reads them at the replay's start commit,
sleep/night/read_files.py):
- a file-reading tool's path: Claude Code's and Cursor's `Read {file_path | path}`, pi's
  `read {path}`, OpenCode's `read {filePath}`, Copilot CLI's `view {path}`, VS Code
  Copilot Chat's `read_file {filePath}` (or its `copilot_readFile` id);
- a shell command that prints a file (Codex reads with its shell): `cat`, `head`, `tail`,
  `nl`, `sed -n …`, `less`, `more`, `bat`, each part of a pipeline or `&&` chain.
Paths are as recorded; the miner keeps those inside the session's folder.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

MAX_TURN_READS = 20
_READ_TOOLS = {"read", "read_file", "readfile", "view", "copilot_readfile"}
_PATH_KEYS = ("file_path", "filePath", "path")
_PRINTERS = {"cat", "head", "tail", "nl", "sed", "less", "more", "bat"}
# options of each printer that take the next word as their value (`head -n 40`,
# `sed -e 's/x/y/'`); sed's script is its first operand unless -e or -f gives it
_VALUE_OPTIONS = {
    "head": {"-n", "-c", "--lines", "--bytes"},
    "tail": {"-n", "-c", "--lines", "--bytes"},
    "sed": {"-e", "-f", "--expression", "--file"},
    "nl": {"-b", "-w", "-s", "-v", "-i"},
}
_SEPARATORS = re.compile(r"\|\||&&|[|;]")


def reads_of(name: str, arguments: Any) -> list[str]:
    """The file a reading tool call read (none for other tools or odd inputs)."""
    if name.lower() not in _READ_TOOLS or not isinstance(arguments, dict):
        return []
    for key in _PATH_KEYS:
        path = arguments.get(key)
        if isinstance(path, str) and path.strip():
            return [path.strip().removeprefix("@")]
    return []


def shell_reads(command: str | None) -> list[str]:
    """The files a shell command prints with the usual printers."""
    if not command:
        return []
    out: list[str] = []
    for part in _SEPARATORS.split(command):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if not words or words[0] not in _PRINTERS:
            continue
        out += _operands(words[0], words[1:])
    return out


def _operands(program: str, args: list[str]) -> list[str]:
    """The file operands of `program args` (options and their values, and sed's script
    when no -e gives it, left out)."""
    files: list[str] = []
    skip_next = False
    script_given = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg in _VALUE_OPTIONS.get(program, ()):
            skip_next = True
            script_given = script_given or program == "sed"
            continue
        if arg.startswith("-") or "<" in arg or ">" in arg:
            continue
        files.append(arg)
    if program == "sed" and not script_given:
        files = files[1:]
    return [f for f in files if not any(c in f for c in "*?$`")]
