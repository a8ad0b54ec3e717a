"""The tools an OfficeQA target may call — glob, read (offset/limit), grep — confined to the
item's own source files.

Confinement is by name, not by directory: a path is accepted only if it is exactly one of
the item's file names (a plain name, no folder part), and the file it names is a regular
file, not a symlink. `..`, absolute paths, folder parts and symlinks are refused with a
message the model reads; no tool can see another item's documents or anything else.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

READ_LIMIT = 200  # lines per read unless asked otherwise
MAX_READ_LIMIT = 400
MAX_GREP_LINES = 50
MAX_LINE_CHARS = 400


class ToolRefused(Exception):
    """A tool call the sandbox will not run; the message goes back to the model."""


@dataclass(frozen=True)
class ItemFiles:
    root: Path
    names: tuple[str, ...]

    def resolve(self, path: str) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise ToolRefused("give a file name (see glob)")
        if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
            raise ToolRefused(
                f"{path!r}: absolute paths are not allowed; use a file name from glob"
            )
        parts = re.split(r"[\\/]", path)
        if ".." in parts:
            raise ToolRefused(f"{path!r}: '..' is not allowed; use a file name from glob")
        if len(parts) != 1 or path not in self.names:
            raise ToolRefused(f"{path!r} is not one of this task's files: {', '.join(self.names)}")
        full = self.root / path
        if full.is_symlink() or not full.is_file():
            raise ToolRefused(f"{path!r} is not a regular file")
        return full

    def glob(self, pattern: str = "*") -> str:
        matches = [n for n in self.names if fnmatch.fnmatch(n, pattern or "*")]
        return "\n".join(matches) if matches else f"no file matches {pattern!r}"

    def read(self, path: str, offset: int = 0, limit: int = READ_LIMIT) -> str:
        lines = self._lines(self.resolve(path))
        offset, limit = max(0, int(offset)), max(1, min(int(limit), MAX_READ_LIMIT))
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

    def grep(self, pattern: str, path: str | None = None) -> str:
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except (re.error, TypeError) as exc:
            raise ToolRefused(f"bad pattern {pattern!r}: {exc}") from None
        files = [path] if path else list(self.names)
        hits: list[str] = []
        for name in files:
            for number, line in enumerate(self._lines(self.resolve(name)), 1):
                if regex.search(line):
                    hits.append(f"{name}:{number}: {line[:MAX_LINE_CHARS]}")
                    if len(hits) >= MAX_GREP_LINES:
                        return "\n".join(hits) + "\n[more matches; narrow the pattern]"
        return "\n".join(hits) if hits else f"no line matches {pattern!r}"

    @staticmethod
    def _lines(path: Path) -> list[str]:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()

    def call(self, name: str, args: dict) -> str:
        """Run one tool call; a refusal or bad arguments become the observation."""
        tools = {"glob": self.glob, "read": self.read, "grep": self.grep}
        if name not in tools:
            return f"error: unknown tool {name!r}; tools: glob, read, grep"
        try:
            return tools[name](**args)
        except ToolRefused as exc:
            return f"refused: {exc}"
        except (TypeError, ValueError) as exc:
            return f"error: bad arguments for {name}: {exc}"
