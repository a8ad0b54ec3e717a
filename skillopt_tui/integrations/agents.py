"""What each agent gets: the files and config entries `skillopt integrations install` writes.

Both agents get the skillopt-sleep skill and the `skillopt mcp` server. Claude Code also gets
the two slash commands as personal commands (the plugin in integrations/claude-code/ is the
marketplace way, with the SessionEnd hook). The MCP server is started as the `skillopt`
found now (an absolute path), so the agent finds it whatever its PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from importlib import resources
from pathlib import Path

from skillopt_tui.integrations.changes import Change, ConfigEdit, FileWrite, IntegrationError

AGENTS = ("claude-code", "codex")
SERVER = "skillopt"
SKILL_NAME = "skillopt-sleep"


def asset(name: str) -> str:
    return (resources.files("skillopt_tui.integrations") / "assets" / name).read_text(
        encoding="utf-8"
    )


def skillopt_command() -> str:
    """The installed `skillopt`: on PATH, else beside this interpreter (a venv not activated)."""
    found = shutil.which("skillopt") or shutil.which(
        "skillopt", path=str(Path(sys.executable).parent)
    )
    if found is None:
        raise IntegrationError(
            "no installed `skillopt` command found (on PATH or beside this Python): "
            "install the package with pip first"
        )
    return str(Path(found).absolute())


# -- Codex: ~/.codex/config.toml ------------------------------------------------------------

BEGIN = "# BEGIN skillopt (written by `skillopt integrations install codex`; uninstall removes it)"
END = "# END skillopt"
TABLE = f"[mcp_servers.{SERVER}]"


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def codex_block(command: str) -> str:
    return "\n".join(
        [
            BEGIN,
            TABLE,
            f"command = {_toml_string(command)}",
            'args = ["mcp"]',
            "# Without it `codex exec` starts its first turn before the server is up.",
            "required = true",
            END,
            "",
        ]
    )


_OUR_BLOCK = re.compile(rf"\n?{re.escape(BEGIN)}\n.*?{re.escape(END)}\n?", re.DOTALL)
_THEIR_TABLE = re.compile(rf"^{re.escape(TABLE)}[ \t]*\n(?:(?!\[).*\n?)*", re.MULTILINE)


def codex_remove(text: str) -> str:
    return _OUR_BLOCK.sub("", text, count=1)


def codex_add(command: str):
    def add(text: str) -> str:
        text = codex_remove(text)
        text = _THEIR_TABLE.sub("", text)  # a hand-made entry of the same name is replaced
        separator = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        return text + separator + codex_block(command)

    return add


def codex_changes(home: Path, command: str) -> list[Change]:
    config = home / ".codex" / "config.toml"
    return [
        FileWrite(
            home / ".agents" / "skills" / SKILL_NAME / "SKILL.md", asset(f"{SKILL_NAME}/SKILL.md")
        ),
        ConfigEdit(config, codex_add(command), codex_remove, TABLE),
    ]


# -- Claude Code: ~/.claude.json (user-scope MCP servers), ~/.claude/{skills,commands} -----


def _load_json(text: str, path: Path) -> dict:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise IntegrationError(
            f"{path}: not valid JSON ({exc}); fix it, then install again"
        ) from None
    if not isinstance(data, dict):
        raise IntegrationError(f"{path}: expected a JSON object")
    return data


def claude_changes(home: Path, command: str) -> list[Change]:
    path = home / ".claude.json"

    def add(text: str) -> str:
        data = _load_json(text, path)
        servers = data.setdefault("mcpServers", {})
        servers[SERVER] = {"type": "stdio", "command": command, "args": ["mcp"], "env": {}}
        return json.dumps(data, indent=2) + "\n"

    def remove(text: str) -> str:
        data = _load_json(text, path)
        data.get("mcpServers", {}).pop(SERVER, None)
        return json.dumps(data, indent=2) + "\n"

    claude = home / ".claude"
    return [
        FileWrite(claude / "skills" / SKILL_NAME / "SKILL.md", asset(f"{SKILL_NAME}/SKILL.md")),
        FileWrite(claude / "commands" / "skillopt-sleep.md", asset("commands/skillopt-sleep.md")),
        FileWrite(
            claude / "commands" / "skillopt-handoff.md", asset("commands/skillopt-handoff.md")
        ),
        ConfigEdit(path, add, remove, f"mcpServers.{SERVER}"),
    ]


def changes_for(agent: str, home: Path, command: str) -> list[Change]:
    if agent == "codex":
        return codex_changes(home, command)
    if agent == "claude-code":
        return claude_changes(home, command)
    raise IntegrationError(f"unknown agent {agent!r}: choose one of {', '.join(AGENTS)}")
