"""A skill document: optional YAML frontmatter plus a Markdown body (DESIGN §3).

Parsing must be lossless: every cache is keyed by the hash of the exact text, and an
unedited skill written back must be byte-for-byte the file the user gave us (CRLF, BOM,
missing trailing newline and all). So the document keeps the exact fence lines and raw
frontmatter text, and `to_text` only concatenates what `parse` split.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core import atomic
from core.errors import UserError

BOM = "\ufeff"
# The opening fence must be the very first line; trailing blanks are tolerated.
_OPEN_FENCE = re.compile(r"---[ \t]*(\r\n|\n)")
# "..." is YAML's own end-of-document marker; some tools write it as the closing fence.
_CLOSE_FENCE = re.compile(r"(?:---|\.\.\.)[ \t]*(?:\r\n|\n|\Z)")


class SkillError(UserError):
    """A skill file that cannot be read or parsed; the message says what to fix."""


def skill_hash(text: str) -> str:
    """sha256 of the exact UTF-8 text: two skills share cache entries only if identical."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def detect_newline(text: str) -> str:
    """The dominant line ending, so inserted text matches the file ("\\n" on a tie)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


@dataclass(frozen=True)
class SkillDocument:
    frontmatter_raw: str | None  # exact text between the fence lines (None if absent)
    frontmatter: dict[str, Any] | None  # parsed YAML ({} for an empty block)
    body: str
    newline: str  # dominant line ending of the whole text
    bom: str = ""  # "\ufeff" if the text started with one
    fence_open: str = ""  # exact opening fence line incl. its line ending
    fence_close: str = ""  # exact closing fence line incl. its line ending (if any)

    @classmethod
    def parse(cls, text: str) -> SkillDocument:
        newline = detect_newline(text)
        bom = BOM if text.startswith(BOM) else ""
        rest = text[len(bom) :]
        opening = _OPEN_FENCE.match(rest)
        if opening is None:
            return cls(None, None, rest, newline, bom)
        pos = opening.end()
        while pos <= len(rest):
            closing = _CLOSE_FENCE.match(rest, pos)
            if closing is not None:
                raw = rest[opening.end() : pos]
                return cls(
                    frontmatter_raw=raw,
                    frontmatter=_load_frontmatter(raw),
                    body=rest[closing.end() :],
                    newline=newline,
                    bom=bom,
                    fence_open=opening.group(0),
                    fence_close=closing.group(0),
                )
            nxt = rest.find("\n", pos)
            if nxt == -1:
                break
            pos = nxt + 1
        raise SkillError(
            "the skill's frontmatter opens with '---' on line 1 but is never closed; "
            "add a closing '---' line after it"
        )

    def to_text(self) -> str:
        if self.frontmatter_raw is None:
            return self.bom + self.body
        return self.bom + self.fence_open + self.frontmatter_raw + self.fence_close + self.body

    @property
    def body_start(self) -> int:
        """Offset of the body in `to_text()`: everything before it is BOM and frontmatter."""
        if self.frontmatter_raw is None:
            return len(self.bom)
        return len(self.bom) + len(self.fence_open + self.frontmatter_raw + self.fence_close)


def _load_frontmatter(raw: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        where = f" at line {exc.problem_mark.line + 2}" if exc.problem_mark else ""
        problem = exc.problem or exc.context or "syntax error"
        raise SkillError(
            f"the skill's frontmatter is not valid YAML ({problem}{where}); "
            "fix it or remove the --- block"
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # safe_load raises plain ValueError for e.g. an impossible date like 2024-13-45.
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SkillError(
            f"the skill's frontmatter is not valid YAML ({reason}); fix it or remove the --- block"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SkillError(
            "the skill's frontmatter must be YAML 'key: value' lines "
            f"(it parses as a {type(data).__name__}); fix it or remove the --- block"
        )
    return data


def read_skill(path: str | Path) -> str:
    """The file's exact text: no newline translation, a BOM is kept as U+FEFF."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SkillError(f"skill file not found: {path}; check the path") from None
    except IsADirectoryError:
        raise SkillError(f"skill path is a directory, not a file: {path}") from None
    except OSError as exc:
        raise SkillError(
            f"cannot read skill file {path} ({exc.strerror or exc}); check its permissions"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(
            f"skill file {path} is not valid UTF-8 (bad byte at offset {exc.start}); "
            "save it as UTF-8"
        ) from None


def load_skill(path: str | Path) -> str:
    """A skill file's exact text, refused with a one-line SkillError if it cannot be read
    or is corrupt (frontmatter that does not parse): caught before any rollout is spent on
    it or it is committed to a skills repository."""
    text = read_skill(path)
    try:
        SkillDocument.parse(text)
    except SkillError as exc:
        raise SkillError(f"{path}: {exc}") from None
    return text


def write_skill(path: str | Path, text: str) -> None:
    """Write the exact text atomically (a crash leaves the old file or the new one)."""
    try:
        atomic.write_text(path, text)
    except UnicodeEncodeError as exc:
        # Lone surrogates cannot be stored as UTF-8.
        raise SkillError(
            f"cannot write skill to {path}: the text is not encodable as UTF-8 (offset {exc.start})"
        ) from None
    except OSError as exc:
        raise SkillError(
            f"cannot write skill file {path} ({exc.strerror or exc}); "
            "check the directory exists and is writable"
        ) from None
