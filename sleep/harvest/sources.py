"""Where the transcripts are: the Claude Code and Codex roots, and the files under them.

Claude Code keeps `<root>/projects/<encoded-cwd>/<session>.jsonl`; the root is each entry of
`$CLAUDE_CONFIG_DIR` (a comma-separated list, as ccusage reads it) or `~/.claude`, plus the
XDG `~/.config/claude`. Sub-agent transcripts (`agent-*.jsonl` beside the sessions, or under
`<session>/subagents/`) are listed but never mined: their prompts are written by a model.
Codex keeps `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, `.jsonl.zst` once compressed,
and `archived_sessions/`. One rollout can exist as plain and compressed, or in both folders:
the plain file and `sessions/` win, so each thread is read once.

Folder names are never decoded into project paths (the encoding loses information); the
project comes from the `cwd` recorded inside the files. A name that is not UTF-8 is
reported and keyed with `\\xNN` escapes (core/path_text.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import UserError
from core.path_text import shown
from sleep.harvest.model import Tool


@dataclass(frozen=True)
class TranscriptFile:
    tool: Tool
    path: Path
    # Identity across runs: a Codex rollout keeps it when it is compressed or archived.
    key: str
    # The project folder the store records beside the file (Cursor's .workspace-trusted,
    # VS Code's workspace.json), for formats whose records carry no cwd.
    project: str | None = None

    @property
    def shown(self) -> str:
        """The path as UTF-8 text (a name that is not UTF-8 with `\\xNN` escapes): what the
        harvest reports and stores; `path` is what it opens."""
        return shown(self.path)


@dataclass
class SourceRoot:
    tool: Tool
    path: Path
    exists: bool
    sessions: list[TranscriptFile] = field(default_factory=list)
    subagent_files: int = 0
    # A database store (OpenCode): its session rows, counted when read.
    store_sessions: int = 0


def _split_list(value: str) -> list[Path]:
    return [Path(part.strip()).expanduser() for part in value.split(",") if part.strip()]


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    out = []
    for p in paths:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def claude_root_paths(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    if explicit:
        return _unique(_split_list(explicit))
    configured = environ.get("CLAUDE_CONFIG_DIR", "")
    roots = _split_list(configured) or [home / ".claude"]
    xdg = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return _unique([*roots, Path(xdg).expanduser() / "claude"])


def codex_root_paths(explicit: str | None, environ: Mapping[str, str], home: Path) -> list[Path]:
    if explicit:
        return _unique(_split_list(explicit))
    return _unique(_split_list(environ.get("CODEX_HOME", "")) or [home / ".codex"])


def _walk_files(top: Path):
    """Files under `top`, not following symlinked folders; a folder that vanishes or
    cannot be listed while we walk is passed over."""
    for dirpath, _dirnames, filenames in os.walk(top, followlinks=False, onerror=None):
        for name in filenames:
            yield Path(dirpath) / name


def scan_claude_root(path: Path) -> SourceRoot:
    projects = path / "projects"
    root = SourceRoot("claude", path, projects.is_dir())
    if not root.exists:
        return root
    for file in sorted(_walk_files(projects)):
        if not file.name.endswith(".jsonl"):
            continue
        depth = len(file.relative_to(projects).parts)
        if file.name.startswith("agent-") or "subagents" in file.parts[len(projects.parts) :]:
            root.subagent_files += 1
        elif depth == 2:
            root.sessions.append(TranscriptFile("claude", file, shown(file)))
        # deeper files (workflows/, tool-results/) are not transcripts
    return root


def _rollout_name(file: Path) -> str | None:
    name = file.name
    if not name.startswith("rollout-"):
        return None
    if name.endswith(".jsonl.zst"):
        return name[: -len(".zst")]
    return name if name.endswith(".jsonl") else None


def scan_codex_root(path: Path) -> SourceRoot:
    root = SourceRoot("codex", path, (path / "sessions").is_dir())
    archived = path / "archived_sessions"
    root.exists = root.exists or archived.is_dir()
    chosen: dict[str, tuple[int, Path]] = {}
    for rank_base, folder in ((0, path / "sessions"), (2, archived)):
        if not folder.is_dir():
            continue
        for file in _walk_files(folder):
            name = _rollout_name(file)
            if name is None:
                continue
            rank = rank_base + (1 if file.name.endswith(".zst") else 0)
            if name not in chosen or rank < chosen[name][0]:
                chosen[name] = (rank, file)
    for name, (_rank, file) in sorted(chosen.items()):
        root.sessions.append(TranscriptFile("codex", file, f"{shown(path)}::{shown(name)}"))
    return root


def discover(
    *,
    claude_home: str | None = None,
    codex_home: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[SourceRoot]:
    """Every candidate root, found or not (the screen shows where it looked)."""
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or Path.home()) if home is None else home
    roots = [scan_claude_root(p) for p in claude_root_paths(claude_home, environ, home)]
    roots += [scan_codex_root(p) for p in codex_root_paths(codex_home, environ, home)]
    return roots


def check_roots(claude_home: str | None, codex_home: str | None) -> None:
    """A root the user named that exists but is a file, a FIFO or a device is a mistake
    to say (a harvest of it found nothing, silently); one not there yet is only empty.
    Cheap, so callers check before they take a lock or write."""
    for flag, given in (("--claude-home", claude_home), ("--codex-home", codex_home)):
        for path in _split_list(given or ""):
            if os.path.exists(path) and not path.is_dir():
                raise UserError(
                    f"{flag} {shown(path)}: not a directory; give the tool's root folder"
                )


def check_more_roots(given: Mapping[str, str | None]) -> None:
    """The same check for the other agents' homes (flag -> value). `--opencode-data` may
    name the database file itself."""
    for flag, value in given.items():
        for path in _split_list(value or ""):
            if flag == "--opencode-data" and path.name.endswith(".db"):
                continue
            if os.path.exists(path) and not path.is_dir():
                raise UserError(
                    f"{flag} {shown(path)}: not a directory; give the tool's root folder"
                )
