"""What each agent gets: the files and config entries `skillopt integrations install` writes.

Every agent gets the skillopt-sleep skill and the `skillopt mcp` server. Claude Code also gets
the two slash commands as personal commands (the plugin in integrations/claude-code/ is the
marketplace way, with the SessionEnd hook). The MCP server is started as the `skillopt`
found now (an absolute path), so the agent finds it whatever its PATH.
"""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

from skillopt_tui.integrations import claude_json, codex_toml
from skillopt_tui.integrations.changes import Change, ConfigEdit, FileWrite
from skillopt_tui.integrations.files import IntegrationError

AGENTS = ("claude-code", "codex", "opencode", "copilot")
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


def codex_changes(home: Path, command: str) -> list[Change]:
    config = home / ".codex" / "config.toml"
    return [
        FileWrite(
            home / ".agents" / "skills" / SKILL_NAME / "SKILL.md", asset(f"{SKILL_NAME}/SKILL.md")
        ),
        ConfigEdit(
            config,
            add=lambda text: codex_toml.add(text, config, command),
            remove=lambda text, _parent: codex_toml.remove(text, config),
            what=f"[mcp_servers.{SERVER}]",
        ),
    ]


def claude_changes(home: Path, command: str) -> list[Change]:
    path = home / ".claude.json"
    claude = home / ".claude"
    return [
        FileWrite(claude / "skills" / SKILL_NAME / "SKILL.md", asset(f"{SKILL_NAME}/SKILL.md")),
        FileWrite(claude / "commands" / "skillopt-sleep.md", asset("commands/skillopt-sleep.md")),
        FileWrite(
            claude / "commands" / "skillopt-handoff.md", asset("commands/skillopt-handoff.md")
        ),
        ConfigEdit(
            path,
            add=lambda text: claude_json.add(text, path, command),
            remove=lambda text, parent: claude_json.remove(text, path, parent),
            what=f"mcpServers.{SERVER}",
            has_parent=lambda text: claude_json.has_parent(text, path),
        ),
    ]


def json_member_changes(config: Path, skill_dir: Path, parent: str, value: dict) -> list[Change]:
    """The skill in `skill_dir` and our member `parent.skillopt` of the JSON file `config`."""
    return [
        FileWrite(skill_dir / SKILL_NAME / "SKILL.md", asset(f"{SKILL_NAME}/SKILL.md")),
        ConfigEdit(
            config,
            add=lambda text: claude_json.add(text, config, "", parent=parent, value=value),
            remove=lambda text, was: claude_json.remove(text, config, was, parent=parent),
            what=f"{parent}.{SERVER}",
            has_parent=lambda text: claude_json.has_parent(text, config, parent),
        ),
    ]


def opencode_changes(home: Path, command: str) -> list[Change]:
    """OpenCode 1.18: `mcp.skillopt` (a local server, its command as one array) in
    ~/.config/opencode/opencode.json, the skill in its global skills folder."""
    folder = home / ".config" / "opencode"
    value = {"type": "local", "command": [command, "mcp"], "enabled": True}
    return json_member_changes(folder / "opencode.json", folder / "skills", "mcp", value)


def copilot_changes(home: Path, command: str) -> list[Change]:
    """Copilot CLI 1.0: `mcpServers.skillopt` in ~/.copilot/mcp-config.json (every tool of
    ours offered), the skill in ~/.copilot/skills/."""
    folder = home / ".copilot"
    value = {"type": "local", "command": command, "args": ["mcp"], "tools": ["*"]}
    return json_member_changes(folder / "mcp-config.json", folder / "skills", "mcpServers", value)


def changes_for(agent: str, home: Path, command: str) -> list[Change]:
    if agent == "codex":
        return codex_changes(home, command)
    if agent == "claude-code":
        return claude_changes(home, command)
    if agent == "opencode":
        return opencode_changes(home, command)
    if agent == "copilot":
        return copilot_changes(home, command)
    raise IntegrationError(f"unknown agent {agent!r}: choose one of {', '.join(AGENTS)}")
