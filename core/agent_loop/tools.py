"""The tools our loop offers a model — list_dir, read_file, grep, glob, edit_file,
write_file and (when a jail is at hand) shell — all confined to one workspace.

Confinement is checked on every call, by the path's meaning and by where it really leads:
absolute paths, `~` and `..` are refused outright; the rest is resolved (symlinks
followed) and must stay inside the workspace root, so a link in the project pointing out is
refused too; writes never go through a symlink. Every argument is bounded (whole numbers,
pattern and content sizes, file sizes read), and grep runs in a child process killed after
GREP_TIMEOUT_S: a backtracking pattern is a refusal, not a hang. A refusal is a message the
model reads, never an exception out of the loop.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from core.agent_loop.bounded_grep import bounded_grep, check_pattern
from core.agent_loop.refusal import ToolRefused, whole_number

READ_LIMIT = 200  # lines per read unless asked otherwise
MAX_READ_LIMIT = 1000
MAX_LINE_CHARS = 400
MAX_FILE_BYTES = 2_000_000  # larger files are not read, searched or edited
MAX_WRITE_CHARS = 500_000
MAX_PATTERN_CHARS = 500
MAX_PATH_CHARS = 1000
MAX_LISTED = 300
MAX_GREP_LINES = 100
GREP_TIMEOUT_S = 3.0
HIDDEN = frozenset({".git"})

# `shell(command, timeout_s) -> output`: a jailed shell the caller provides
# (sleep/night/replay_shell.py); it stops the command after `timeout_s`.
Shell = Callable[[str, float], str]
SHELL_TIMEOUT_S = 120.0


def _text_arg(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise ToolRefused(f"{what} must be a string")
    if len(value) > limit:
        raise ToolRefused(f"{what} has more than {limit} characters")
    return value


@dataclass(frozen=True)
class ToolSpec:
    name: str
    shape: str  # the arguments, as the protocol shows them
    about: str


SPECS = (
    ToolSpec("list_dir", '{"path": "."}', "the entries of a folder (folders end in /)"),
    ToolSpec(
        "read_file",
        '{"path": "FILE", "offset": 0, "limit": 200}',
        "numbered lines of a text file",
    ),
    ToolSpec("grep", '{"pattern": "REGEX", "path": "."}', "matching lines under a path"),
    ToolSpec("glob", '{"pattern": "**/*.py"}', "files whose path matches the pattern"),
    ToolSpec(
        "edit_file",
        '{"path": "FILE", "old": "exact text", "new": "replacement"}',
        "replace text that occurs exactly once",
    ),
    ToolSpec("write_file", '{"path": "FILE", "content": "..."}', "create or overwrite a file"),
    ToolSpec("shell", '{"command": "make test"}', "run a command in a jailed copy (no network)"),
)


class WorkspaceTools:
    """The tools over one workspace root; `shell` is offered only when given."""

    def __init__(self, root: Path, *, shell: Shell | None = None) -> None:
        self.root = root.resolve()
        self.shell_runner = shell
        # time.monotonic() by which every tool must be done (the loop's time cap), if any.
        self.deadline: float | None = None

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(s for s in SPECS if s.name != "shell" or self.shell_runner is not None)

    # -- paths -------------------------------------------------------------------------

    def resolve(self, path: object, *, must_exist: bool = True) -> Path:
        """The real path `path` names inside the workspace, or a refusal."""
        path = _text_arg(path if path is not None else ".", "path", MAX_PATH_CHARS)
        path = path.strip() or "."
        if "\x00" in path:
            raise ToolRefused("a path cannot hold a NUL character")
        if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
            raise ToolRefused(
                f"{path!r}: absolute paths are not allowed; use paths relative to the workspace"
            )
        parts = re.split(r"[\\/]", path)
        if ".." in parts:
            raise ToolRefused(f"{path!r}: '..' is not allowed; the workspace is all there is")
        if HIDDEN & set(parts):
            raise ToolRefused(f"{path!r}: version-control folders are not part of the workspace")
        full = Path(os.path.realpath(self.root / path))
        if full != self.root and self.root not in full.parents:
            raise ToolRefused(f"{path!r} leads outside the workspace (a symlink); not allowed")
        if must_exist and not full.exists():
            raise ToolRefused(f"{path!r} does not exist (see list_dir or glob)")
        return full

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def _file(self, path: object) -> Path:
        full = self.resolve(path)
        if not full.is_file():
            raise ToolRefused(f"{path!r} is not a regular file")
        if full.stat().st_size > MAX_FILE_BYTES:
            raise ToolRefused(
                f"{path!r} is larger than {MAX_FILE_BYTES // 1_000_000} MB; "
                "grep it for what you need instead"
            )
        return full

    def _walk(self, top: Path) -> list[Path]:
        """Regular files under `top` (symlinked folders not followed, .git left out)."""
        found: list[Path] = []
        for folder, dirs, files in os.walk(top, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in HIDDEN)
            for name in sorted(files):
                path = Path(folder) / name
                if not path.is_symlink() and path.is_file():
                    found.append(path)
        return found

    # -- tools -------------------------------------------------------------------------

    def list_dir(self, path: str = ".") -> str:
        folder = self.resolve(path)
        if not folder.is_dir():
            raise ToolRefused(f"{path!r} is not a folder")
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in os.scandir(folder))
        names = [n for n in names if n.rstrip("/") not in HIDDEN]
        if not names:
            return f"{path} is empty"
        more = len(names) - MAX_LISTED
        return "\n".join(names[:MAX_LISTED]) + (f"\n[{more} more entries]" if more > 0 else "")

    def read_file(self, path: str, offset: int = 0, limit: int = READ_LIMIT) -> str:
        full = self._file(path)
        offset = max(0, whole_number(offset, "offset"))
        limit = max(1, min(whole_number(limit, "limit"), MAX_READ_LIMIT))
        lines = full.read_text(encoding="utf-8", errors="replace").splitlines()
        chunk = lines[offset : offset + limit]
        if not chunk:
            return f"{path} has {len(lines)} lines; offset {offset} is past the end"
        body = "\n".join(
            f"{offset + i + 1}: {line[:MAX_LINE_CHARS]}" for i, line in enumerate(chunk)
        )
        more = len(lines) - offset - len(chunk)
        return body + (
            f"\n[{more} more lines; read with offset {offset + len(chunk)}]" if more > 0 else ""
        )

    def glob(self, pattern: str = "**/*") -> str:
        pattern = _text_arg(pattern, "pattern", MAX_PATTERN_CHARS) or "**/*"
        if pattern.startswith("/") or ".." in PurePosixPath(pattern).parts:
            raise ToolRefused("a glob pattern is relative to the workspace, without '..'")
        matches = []
        for path in self._walk(self.root):
            rel = self._rel(path)
            if fnmatch.fnmatch(rel, pattern) or PurePosixPath(rel).match(pattern):
                matches.append(rel)
        if not matches:
            return f"no file matches {pattern!r}"
        more = len(matches) - MAX_LISTED
        return "\n".join(matches[:MAX_LISTED]) + (f"\n[{more} more; narrow it]" if more > 0 else "")

    def grep(self, pattern: str, path: str = ".") -> str:
        pattern = _text_arg(pattern, "pattern", MAX_PATTERN_CHARS)
        check_pattern(pattern)
        top = self.resolve(path)
        paths = [top] if top.is_file() else self._walk(top)
        files = [[self._rel(p), str(p)] for p in paths if p.stat().st_size <= MAX_FILE_BYTES]
        return bounded_grep(
            pattern, files, limit=MAX_GREP_LINES, width=MAX_LINE_CHARS, timeout_s=GREP_TIMEOUT_S
        )

    def edit_file(self, path: str, old: str, new: str) -> str:
        full = self._file(path)
        old = _text_arg(old, "old", MAX_WRITE_CHARS)
        new = _text_arg(new, "new", MAX_WRITE_CHARS)
        if not old:
            raise ToolRefused("old must be the exact text to replace (not empty)")
        text = full.read_text(encoding="utf-8", errors="replace")
        count = text.count(old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise ToolRefused(f"the old text {where} in {path}; give text that occurs exactly once")
        self._write(full, text.replace(old, new, 1))
        return f"edited {self._rel(full)}"

    def write_file(self, path: str, content: str) -> str:
        content = _text_arg(content, "content", MAX_WRITE_CHARS)
        full = self.resolve(path, must_exist=False)
        if full.is_dir():
            raise ToolRefused(f"{path!r} is a folder")
        full.parent.mkdir(parents=True, exist_ok=True)
        self._write(full, content)
        return f"wrote {self._rel(full)} ({len(content)} characters)"

    def _write(self, full: Path, text: str) -> None:
        # O_NOFOLLOW: a symlink swapped in after resolve() is not written through.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        fd = os.open(full, flags, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)

    def shell(self, command: str) -> str:
        if self.shell_runner is None:
            raise ToolRefused("no shell here: commands cannot be run in this workspace")
        command = _text_arg(command, "command", MAX_PATTERN_CHARS * 8)
        timeout = SHELL_TIMEOUT_S
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
        if timeout <= 0:
            raise ToolRefused("the replay's time is up: no more commands")
        return self.shell_runner(command, timeout)

    def call(self, name: str, args: dict) -> str:
        """Run one tool call; a refusal or bad arguments become the observation."""
        names = [s.name for s in self.specs]
        if name not in names:
            return f"error: unknown tool {name!r}; tools: {', '.join(names)}"
        try:
            return getattr(self, name)(**args)
        except ToolRefused as exc:
            return f"refused: {exc}"
        except (TypeError, ValueError, OverflowError) as exc:
            return f"error: bad arguments for {name}: {exc}"
        except OSError as exc:
            return f"error: {name} failed: {exc.strerror or exc}"
