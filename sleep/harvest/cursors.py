"""Where each transcript was read up to, so the next night reads only what is new.

A cursor holds the file's size and mtime (integer nanoseconds since the epoch: no time
zone is involved anywhere) and the byte offset after the last complete line read, plus
digests of the file's first bytes and of the bytes just before the offset. Reading
resumes at the offset only when both digests still match: a file that was rewritten,
truncated, or replaced by another under the same name is read again from the start.
For a compressed rollout the offset and digests are over the decompressed bytes, so a
rollout that Codex compresses or archives keeps its cursor (its key ignores `.zst` and
the folder).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from core.atomic import write_json
from sleep.harvest.jsonl import PROBE_BYTES

STATE_VERSION = 1
RECOVER = (
    "restore it from a backup, or delete it to read every transcript again from the start "
    "(tasks mined already stay in tasks.json)"
)
_CURSOR_TYPES = {
    "path": str, "size": int, "mtime_ns": int, "offset": int, "head": str, "tail": str,
    "delivered": bool, "identity": dict,
}  # fmt: skip


@dataclass
class Cursor:
    path: str
    size: int
    mtime_ns: int
    offset: int
    head: str
    tail: str
    # Whether the session's tasks were handed out; a file read only to learn that it was
    # out of scope keeps offset 0, so a later harvest of its project still gets it all.
    delivered: bool
    identity: dict[str, Any] = field(default_factory=dict)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string"}.get(
        type(value), type(value).__name__
    )


def _state_problem(data: Any) -> str:
    """What is wrong with a loaded harvest-state.json ('' when it is what we write)."""
    if not isinstance(data, dict):
        return f"{_kind(data)}, not an object"
    if data.get("version") != STATE_VERSION:
        return f"version {data.get('version')!r}, not {STATE_VERSION}"
    cursors = data.get("cursors", {})
    if not isinstance(cursors, dict):
        return f"cursors is {_kind(cursors)}, not an object"
    for key, cursor in cursors.items():
        if not isinstance(cursor, dict):
            return f"cursor {key!r} is {_kind(cursor)}"
        missing = [f for f in _CURSOR_TYPES if f not in cursor and f != "identity"]
        unknown = sorted(set(cursor) - set(_CURSOR_TYPES))
        wrong = [
            f
            for f, t in _CURSOR_TYPES.items()
            if f in cursor
            and not (isinstance(cursor[f], t) and (t is not int or not isinstance(cursor[f], bool)))
        ]
        if missing or unknown or wrong:
            return f"cursor {key!r}: bad fields {', '.join(missing + unknown + wrong)}"
    uuids = data.get("claude_uuids", [])
    if not isinstance(uuids, list) or not all(isinstance(u, str) for u in uuids):
        return "claude_uuids is not a list of strings"
    keys = data.get("codex_prompt_keys", {})
    if not isinstance(keys, dict) or not all(
        isinstance(v, list) and all(isinstance(k, str) for k in v) for v in keys.values()
    ):
        return "codex_prompt_keys is not an object of lists of strings"
    return ""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    parts, left = [], n
    while left > 0:
        got = stream.read(min(left, 1 << 20))
        if not got:
            break
        parts.append(got)
        left -= len(got)
    return b"".join(parts)


def probe(stream: BinaryIO, offset: int) -> tuple[bytes, bytes, int]:
    """(head bytes, tail bytes, bytes available) for a cursor at `offset`: the same head
    and tail a JsonlReader had when it stopped there. Leaves the stream at `offset`, or
    at its end when the file is now shorter."""
    head = _read_exact(stream, min(offset, PROBE_BYTES))
    if offset <= PROBE_BYTES:
        return head, head, len(head)
    try:
        stream.seek(offset - PROBE_BYTES)
    except (OSError, io.UnsupportedOperation):
        _read_exact(stream, offset - PROBE_BYTES - stream.tell())  # decompressing: read on
    tail = _read_exact(stream, PROBE_BYTES)
    return head, tail, stream.tell()


@dataclass
class HarvestState:
    """Everything kept between harvests, in one JSON file written atomically."""

    cursors: dict[str, Cursor] = field(default_factory=dict)
    # Claude prompt uuids already delivered: resumed and forked sessions replay them.
    claude_uuids: set[str] = field(default_factory=set)
    # Codex thread id -> keys of its delivered prompts, to spot a fork's replayed prefix.
    codex_prompt_keys: dict[str, list[str]] = field(default_factory=dict)
    # Database stores (OpenCode): store path -> session id -> its row cursor
    # {"updated": time_updated, "t": last message time, "id": last message id, "delivered"}.
    rows: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> HarvestState:
        """The saved state, or a UserError naming the file when it is not what a harvest
        wrote: starting over silently would hand every old session to tonight's night."""
        from core.errors import UserError

        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise UserError(f"harvest state {path} is unreadable ({exc}); {RECOVER}") from None
        problem = _state_problem(data)
        if problem:
            raise UserError(f"harvest state {path} is malformed ({problem}); {RECOVER}")
        return cls(
            cursors={k: Cursor(**v) for k, v in data.get("cursors", {}).items()},
            claude_uuids=set(data.get("claude_uuids", [])),
            codex_prompt_keys=dict(data.get("codex_prompt_keys", {})),
            rows=dict(data.get("rows", {})),
        )

    def save(self, path: Path) -> None:
        write_json(
            path,
            {
                "version": STATE_VERSION,
                # Each cursor's fields as they are, not asdict's deep copy: written at
                # once, and the identity dict is a copy already (SessionIdentity.to_json).
                "cursors": {k: dict(vars(c)) for k, c in sorted(self.cursors.items())},
                "claude_uuids": sorted(self.claude_uuids),
                "codex_prompt_keys": self.codex_prompt_keys,
                "rows": self.rows,
            },
        )
