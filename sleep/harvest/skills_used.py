"""Which skills a session used, from its own tool calls: the routing rule "the skill named
in the transcript" (sleep/night/routing.py) needs them.

Claude Code loads a skill with its `Skill` tool (`input.skill`, `input.command` in older
builds) and injects the body as a meta message starting `Base directory for this skill:
<dir>`; it can also read `.claude/skills/<name>/SKILL.md` with `Read` or a shell command.
Codex has no skill tool: it reads `.agents/skills/<name>/SKILL.md` (or `.codex/skills/…`)
and AGENTS.md files with its shell tools (`exec_command`, `shell`, …), and a skill the
person names (`$name`) is injected as a `<skill>` message holding `<name>` and `<path>`.

A session's `skills` holds skill names (the folder name of a `skills/<name>/SKILL.md`, or
the Skill tool's argument); `skill_files` holds the instruction files it read (absolute
when the session's cwd tells where), so a skill deployed to a file the session read is
found even when its repository name differs. Both are bounded and kept in the session's
identity, so a later read from the cursor still knows them.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from sleep.harvest.identity import SessionIdentity

MAX_SKILLS = 20
MAX_NAME_CHARS = 100
# The words of a command or path: a file name ends at a quote, a space or a shell separator.
_WORD = re.compile(r"""[^\s'"`;|&<>()=,]+""")
_SKILL_FILE = re.compile(r"(?:^|/)skills/([^/]+)/SKILL\.md$")
_MAIN_FILES = ("AGENTS.md", "CLAUDE.md")
_BASE_DIR = "Base directory for this skill:"
_INJECTED_NAME = re.compile(r"<name>\s*([^<\n]{1,100}?)\s*</name>")
_INJECTED_PATH = re.compile(r"<path>\s*([^<\n]{1,1000}?)\s*</path>")
_READ_TOOLS = {"read", "view", "read_file", "cat"}


def _note(identity: SessionIdentity, field: str, value: str) -> None:
    value = value.strip()
    if not value or len(value) > (MAX_NAME_CHARS if field == "skills" else 1000):
        return
    values = identity.skills if field == "skills" else identity.skill_files
    if value not in values and len(values) < MAX_SKILLS:
        values.append(value)


def _absolute(path: str, cwd: str | None) -> str:
    path = os.path.expanduser(path)
    if not os.path.isabs(path) and cwd:
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def note_path(identity: SessionIdentity, path: str) -> None:
    """A file the session read: a skill's SKILL.md (its folder names the skill) or a main
    instruction file."""
    if not isinstance(path, str) or len(path) > 4000:
        return
    for word in _WORD.findall(path):
        skill = _SKILL_FILE.search(word)
        if skill:
            _note(identity, "skills", skill.group(1))
        if skill or os.path.basename(word) in _MAIN_FILES:
            _note(identity, "skill_files", _absolute(word, identity.cwd))


def note_command(identity: SessionIdentity, command: str | None) -> None:
    """A shell command the session ran: every skill or instruction file it names."""
    if isinstance(command, str):
        note_path(identity, command[:4000])


def claude_tool_use(identity: SessionIdentity, name: str, arguments: Any) -> None:
    """A Claude Code tool_use block: `Skill` names its skill, `Read` a file."""
    if not isinstance(arguments, dict):
        return
    if name == "Skill":
        skill = arguments.get("skill", arguments.get("command"))
        if isinstance(skill, str):
            skill = skill.strip().lstrip("/")
            _note(identity, "skills", skill)
            if ":" in skill:  # a plugin's skill, `plugin:name`
                _note(identity, "skills", skill.rsplit(":", 1)[1])
    elif name.lower() in _READ_TOOLS:
        path = arguments.get("file_path", arguments.get("path"))
        if isinstance(path, str):
            note_path(identity, path)


def claude_meta_text(identity: SessionIdentity, text: str) -> None:
    """A meta user message: a loaded skill's body starts with its base directory."""
    stripped = text.lstrip()
    if stripped.startswith(_BASE_DIR):
        folder = stripped[len(_BASE_DIR) :].split("\n", 1)[0].strip()
        if folder:
            note_path(identity, folder.rstrip("/") + "/SKILL.md")


def codex_injected(identity: SessionIdentity, text: str) -> None:
    """A `<skill>` message Codex injected for a skill the person named."""
    if not text.lstrip().startswith("<skill>"):
        return
    head = text[:2000]
    name = _INJECTED_NAME.search(head)
    path = _INJECTED_PATH.search(head)
    if name:
        _note(identity, "skills", name.group(1))
    if path:
        note_path(identity, path.group(1))


def codex_arguments(identity: SessionIdentity, arguments: Any) -> None:
    """A Codex tool call's arguments (a dict or JSON text): its command and any path."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            note_command(identity, arguments)
            return
    if not isinstance(arguments, dict):
        return
    for key in ("cmd", "command", "path", "file_path", "input"):
        value = arguments.get(key)
        if isinstance(value, list):
            value = " ".join(v for v in value if isinstance(v, str))
        if isinstance(value, str):
            note_command(identity, value)
