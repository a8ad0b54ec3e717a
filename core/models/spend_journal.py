"""The spend journal: one JSON line per model call, appended (and, for a paid call,
fsync'd) when the reply arrives and before anything uses it.

Why: the ledger in state.json is written at step boundaries, so a process killed mid-step
lost the spend of that step, and the redone step replayed its answers from the caches for
free: a cap of $3 could serve $5. The journal is the ledger's durable source of truth; a
resumed run replays it, so the cap holds across kill -9. A torn last line (a kill mid-write)
is skipped: the call it described had not been handed to anyone yet.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


class SpendJournal:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fd: int | None = None

    def exists(self) -> bool:
        return self.path.is_file()

    def append(self, entry: dict[str, Any], *, durable: bool) -> None:
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(self._fd, line)
            if durable:
                os.fsync(self._fd)

    def read(self) -> list[dict[str, Any]]:
        """Every complete entry, in order (a torn or foreign line is skipped)."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        entries = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and "role" in entry:
                entries.append(entry)
        return entries

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
