"""The tools an OfficeQA target may call — glob, read (offset/limit), grep — confined to the
item's own source files.

Confinement is by name, not by directory: a path is accepted only if it is exactly one of
the item's file names (a plain name, no folder part), and the file it names is a regular
file, not a symlink. `..`, absolute paths, folder parts and symlinks are refused with a
message the model reads; no tool can see another item's documents or anything else.

Every argument is bounded: counts must be whole numbers (JSON's `Infinity` is not one), a
pattern has at most MAX_PATTERN_CHARS, and grep runs in a child process killed after
GREP_TIMEOUT_S (core/agent_loop/bounded_grep.py): a backtracking pattern is a refusal, not a hang.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from core.agent_loop.bounded_grep import bounded_grep, check_pattern
from core.agent_loop.refusal import ToolRefused, whole_number

READ_LIMIT = 200  # lines per read unless asked otherwise
MAX_READ_LIMIT = 400
MAX_GREP_LINES = 50
MAX_LINE_CHARS = 400
MAX_PATTERN_CHARS = 500
MAX_NAME_CHARS = 255
GREP_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class ItemFiles:
    root: Path
    names: tuple[str, ...]

    def resolve(self, path: str) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise ToolRefused("give a file name (see glob)")
        if len(path) > MAX_NAME_CHARS:
            raise ToolRefused(f"a file name has at most {MAX_NAME_CHARS} characters (see glob)")
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
        if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN_CHARS:
            raise ToolRefused(f"a pattern is a string of at most {MAX_PATTERN_CHARS} characters")
        matches = [n for n in self.names if fnmatch.fnmatch(n, pattern or "*")]
        return "\n".join(matches) if matches else f"no file matches {pattern!r}"

    def read(self, path: str, offset: int = 0, limit: int = READ_LIMIT) -> str:
        lines = self._lines(self.resolve(path))
        offset = max(0, whole_number(offset, "offset"))
        limit = max(1, min(whole_number(limit, "limit"), MAX_READ_LIMIT))
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
        if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN_CHARS:
            raise ToolRefused(f"a pattern is a string of at most {MAX_PATTERN_CHARS} characters")
        check_pattern(pattern, ignore_case=True)
        names = [path] if path else list(self.names)
        files = [[name, str(self.resolve(name))] for name in names]
        return bounded_grep(
            pattern,
            files,
            limit=MAX_GREP_LINES,
            width=MAX_LINE_CHARS,
            timeout_s=GREP_TIMEOUT_S,
            ignore_case=True,
        )

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
        except (TypeError, ValueError, OverflowError) as exc:
            return f"error: bad arguments for {name}: {exc}"
