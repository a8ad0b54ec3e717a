"""Build Claude Code and Codex transcript lines for tests (our own made-up content), and
lay them out the way the CLIs do on disk."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "formats" / "examples"
SHARED_EXAMPLES = Path("/work/shared/formats/examples")
REAL = Path(__file__).resolve().parent / "fixtures" / "real"

_counter = itertools.count(1)


def examples_dir() -> Path:
    for candidate in (EXAMPLES.resolve(), SHARED_EXAMPLES):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("shared/formats/examples not found")


def uid() -> str:
    n = next(_counter)
    return f"00000000-0000-4000-8000-{n:012d}"


def claude_user(text: Any, *, cwd="/home/alex/src/app", session="s-1", **extra) -> dict:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": extra.pop("uuid", None) or uid(),
        "timestamp": extra.pop("timestamp", "2026-03-26T14:02:10.018Z"),
        "userType": "external",
        "entrypoint": extra.pop("entrypoint", "cli"),
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.84",
        "gitBranch": extra.pop("gitBranch", "main"),
    }
    record.update(extra)
    return record


def claude_assistant(text="ok", *, cwd="/home/alex/src/app", session="s-1", model="m") -> dict:
    return {
        "type": "assistant",
        "uuid": uid(),
        "cwd": cwd,
        "sessionId": session,
        "message": {"id": "msg_1", "role": "assistant", "model": model,
                    "content": [{"type": "text", "text": text}]},
    }  # fmt: skip


def codex_line(kind: str, payload: dict, timestamp="2026-06-10T16:20:43.214Z") -> dict:
    return {"timestamp": timestamp, "type": kind, "payload": payload}


def codex_meta(thread="019e0000-0000-7000-8000-000000000001", cwd="/home/alex/src/app", **extra):
    payload = {"id": thread, "cwd": cwd, "originator": "codex-tui", "cli_version": "0.137.0",
               "source": "cli", "git": {"branch": "main"}}  # fmt: skip
    payload.update(extra)
    return codex_line("session_meta", payload)


def codex_prompt(text: str, timestamp="2026-06-10T16:20:43.214Z") -> list[dict]:
    """A typed prompt as Codex records it: a response item and a user_message event."""
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return [
        codex_line("response_item", item, timestamp),
        codex_line("event_msg", {"type": "user_message", "message": text}, timestamp),
    ]


def jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def encode_cwd(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def write_claude(home: Path, records: list[dict], *, session="s-1", folder=None) -> Path:
    cwd = records[0].get("cwd", "/x") if records else "/x"
    path = home / "projects" / (folder or encode_cwd(cwd)) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jsonl(records))
    return path


def write_codex(home: Path, records: list[dict], *, thread="019e0000-0000-7000-8000-000000000001",
                day="2026/06/10", stamp="2026-06-10T18-20-31") -> Path:  # fmt: skip
    path = home / "sessions" / day / f"rollout-{stamp}-{thread}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jsonl(records))
    return path


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def touch_in_order(paths: list[Path], start: int = 1_700_000_000) -> None:
    """Distinct mtimes, oldest first (the harvest reads in mtime order)."""
    for i, p in enumerate(paths):
        os.utime(p, ns=((start + i) * 10**9, (start + i) * 10**9))
