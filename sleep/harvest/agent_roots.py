"""Where the five other agents keep their sessions: pi, OpenCode, Copilot CLI, VS Code
Copilot Chat and Cursor (formats: ../shared/formats/more-agents.md).

Each home is found like Claude's and Codex's: the flag (comma-separated for several),
else the agent's environment variable, else its default folder. Every candidate is
returned, found or not, so the screen can show where it looked. Folder names are never
decoded into projects: the project comes from the records (pi's header, Copilot's
`session.start`) or from the file the agent keeps beside them (Cursor's
`.workspace-trusted`, VS Code's `workspace.json`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from core.path_text import shown
from sleep.harvest.sources import SourceRoot, TranscriptFile, _split_list, _unique, _walk_files

OPENCODE_DB = "opencode.db"


def _xdg(environ: Mapping[str, str], name: str, home: Path, default: str) -> Path:
    return Path(environ.get(name) or str(home / default)).expanduser()


def pi_root_paths(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    """pi's agent folder: `$PI_CODING_AGENT_DIR` (pi 0.73.1's config.js) or `~/.pi/agent`."""
    if explicit:
        return _unique(_split_list(explicit))
    return _unique(_split_list(environ.get("PI_CODING_AGENT_DIR", "")) or [home / ".pi" / "agent"])


def opencode_db_paths(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    """`opencode.db` files: in the folders given (or a db file given directly), else
    `$OPENCODE_DB`, else `$XDG_DATA_HOME/opencode` or `~/.local/share/opencode`."""
    if explicit:
        given = _split_list(explicit)
    elif environ.get("OPENCODE_DB"):
        given = _split_list(environ["OPENCODE_DB"])
    else:
        given = [_xdg(environ, "XDG_DATA_HOME", home, ".local/share") / "opencode"]
    return _unique([p if p.name.endswith(".db") else p / OPENCODE_DB for p in given])


def copilot_root_paths(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    """Copilot CLI's folder: `$COPILOT_HOME` (`copilot help environment`) or `~/.copilot`."""
    if explicit:
        return _unique(_split_list(explicit))
    return _unique(_split_list(environ.get("COPILOT_HOME", "")) or [home / ".copilot"])


def vscode_user_dirs(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    """Every VS Code user-data folder (stable, Insiders, portable) on this machine."""
    if explicit:
        return _unique(_split_list(explicit))
    config = _xdg(environ, "XDG_CONFIG_HOME", home, ".config")
    mac = home / "Library" / "Application Support"
    bases = [config, mac] + ([Path(environ["APPDATA"])] if environ.get("APPDATA") else [])
    dirs = [base / name for base in bases for name in ("Code", "Code - Insiders")]
    if environ.get("VSCODE_PORTABLE"):
        dirs.append(Path(environ["VSCODE_PORTABLE"]) / "user-data")
    return _unique(dirs)


def cursor_root_paths(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    """Cursor's folder: `~/.cursor` (projects/ inside); it documents no variable for it."""
    if explicit:
        return _unique(_split_list(explicit))
    return [home / ".cursor"]


def _jsonl_under(top: Path) -> Iterator[Path]:
    return (f for f in sorted(_walk_files(top)) if f.name.endswith(".jsonl"))


def scan_pi_root(path: Path) -> SourceRoot:
    sessions = path / "sessions"
    root = SourceRoot("pi", path, sessions.is_dir())
    if root.exists:
        root.sessions = [TranscriptFile("pi", f, shown(f)) for f in _jsonl_under(sessions)]
    return root


def scan_copilot_root(path: Path) -> SourceRoot:
    """One `events.jsonl` per session folder under `session-state/`."""
    state = path / "session-state"
    root = SourceRoot("copilot", path, state.is_dir())
    if root.exists:
        for folder in sorted(p for p in state.iterdir() if p.is_dir()):
            events = folder / "events.jsonl"
            if events.is_file():
                root.sessions.append(TranscriptFile("copilot", events, shown(events)))
    return root


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _folder_of_uri(uri: object) -> str | None:
    if not isinstance(uri, str) or not uri:
        return None
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return None  # a remote workspace (vscode-remote://…): not a folder here
    return unquote(parsed.path) or None


def vscode_project(workspace_dir: Path) -> str | None:
    """The folder of a workspaceStorage entry: `folder`, or the directory of the
    `.code-workspace` file in `workspace`; None without a mapping."""
    data = _read_json(workspace_dir / "workspace.json")
    if not isinstance(data, dict):
        return None
    folder = _folder_of_uri(data.get("folder"))
    if folder:
        return folder
    workspace = _folder_of_uri(data.get("workspace"))
    return os.path.dirname(workspace) if workspace else None


def scan_vscode_dir(path: Path) -> SourceRoot:
    storage = path / "User" / "workspaceStorage"
    root = SourceRoot("vscode", path, storage.is_dir())
    if root.exists:
        for chats in sorted(storage.glob("*/chatSessions")):
            project = vscode_project(chats.parent)
            for f in sorted(chats.glob("*.jsonl")):
                root.sessions.append(TranscriptFile("vscode", f, shown(f), project))
    return root


def cursor_project(project_dir: Path) -> str | None:
    data = _read_json(project_dir / ".workspace-trusted")
    path = data.get("workspacePath") if isinstance(data, dict) else None
    return path if isinstance(path, str) and path else None


def scan_cursor_root(path: Path) -> SourceRoot:
    projects = path / "projects"
    root = SourceRoot("cursor", path, projects.is_dir())
    if root.exists:
        for transcripts in sorted(projects.glob("*/agent-transcripts")):
            project = cursor_project(transcripts.parent)
            for f in _jsonl_under(transcripts):
                root.sessions.append(TranscriptFile("cursor", f, shown(f), project))
    return root


def opencode_root(db: Path) -> SourceRoot:
    return SourceRoot("opencode", db, db.is_file())


def discover_more(
    *,
    pi_home: str | None = None,
    opencode_data: str | None = None,
    copilot_home: str | None = None,
    vscode_user_dir: str | None = None,
    cursor_home: str | None = None,
    environ: Mapping[str, str],
    home: Path,
) -> list[SourceRoot]:
    roots = [scan_pi_root(p) for p in pi_root_paths(pi_home, environ, home)]
    roots += [opencode_root(p) for p in opencode_db_paths(opencode_data, environ, home)]
    roots += [scan_copilot_root(p) for p in copilot_root_paths(copilot_home, environ, home)]
    roots += [scan_vscode_dir(p) for p in vscode_user_dirs(vscode_user_dir, environ, home)]
    roots += [scan_cursor_root(p) for p in cursor_root_paths(cursor_home, environ, home)]
    return roots


MORE_FLAGS = {
    "pi_home": "--pi-home",
    "opencode_data": "--opencode-data",
    "copilot_home": "--copilot-home",
    "vscode_user_dir": "--vscode-user-dir",
    "cursor_home": "--cursor-home",
}


def more_homes_in_use(settings: object, environ: Mapping[str, str], home: Path) -> dict[str, str]:
    """For a cron line (cron has no `$OPENCODE_DB`, `$XDG_DATA_HOME`…): each agent's homes
    as they resolve now, by flag, keeping only the ones that exist (none: no flag)."""
    finders = {
        "pi_home": pi_root_paths,
        "opencode_data": opencode_db_paths,
        "copilot_home": copilot_root_paths,
        "vscode_user_dir": vscode_user_dirs,
        "cursor_home": cursor_root_paths,
    }
    out = {}
    for name, find in finders.items():
        found = [p for p in find(getattr(settings, name, None), environ, home) if p.exists()]
        if found:
            out[MORE_FLAGS[name]] = ",".join(str(p) for p in found)
    return out
