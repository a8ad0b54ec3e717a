"""The on-disk response cache: a repeated or resumed run re-spends nothing.

Keyed by the SHA-256 of the canonical JSON of the full request — backend, endpoint
identity, model, messages and every sampling setting — so any change to what would be sent
is a miss. SQLite in WAL mode lets several runs (processes) share one file; one connection
guarded by a lock serves all threads of this process. Only answers are kept: a reply with no
text is never stored, and an entry that is not a usable answer (no text, token counts that
are not non-negative integers) is read as a miss, so it cannot be replayed as a score of 0.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from core.models.types import BadRequestError, Completion, ModelError, Request, Usage

SCHEMA_VERSION = 1


def canonical_json(obj: Any) -> str:
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise BadRequestError(f"a model request must be plain JSON data: {exc}") from None


def request_key(request: Request, endpoint: str = "", scope: str = "") -> str:
    """Stable key of everything that determines the answer. `endpoint` tells apart two
    servers that answer to the same model name (it must not contain a random port);
    `scope` is what else makes a sample (the run seed of a replicate), "" for none."""
    payload: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "backend": request.backend,
        "endpoint": endpoint,
        "model": request.model,
        "messages": request.messages,
        "settings": request.settings,
    }
    if scope:  # absent rather than empty, so unscoped keys stay what they always were
        payload["scope"] = scope
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _usable(data: Any) -> bool:
    """An entry is an answer: non-empty text, token counts that are non-negative ints."""
    if not isinstance(data, dict) or not isinstance(data.get("text"), str) or not data["text"]:
        return False
    usage = data.get("usage")
    return isinstance(usage, dict) and all(
        type(usage.get(k)) is int and usage[k] >= 0 for k in ("input_tokens", "output_tokens")
    )


class ResponseCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS responses ("
                    " key TEXT PRIMARY KEY, backend TEXT, model TEXT,"
                    " completion TEXT NOT NULL, created REAL)"
                )
                conn.commit()
            except (sqlite3.Error, OSError) as exc:
                raise self._unusable(exc) from None
            self._conn = conn
        return self._conn

    def _unusable(self, exc: BaseException) -> ModelError:
        return ModelError(
            f"response cache {self.path} is unusable ({exc}); delete the file or set "
            "cache.enabled false"
        )

    def get(self, key: str) -> Completion | None:
        with self._lock:
            try:
                row = (
                    self._db()
                    .execute("SELECT completion FROM responses WHERE key = ?", (key,))
                    .fetchone()
                )
            except sqlite3.Error as exc:
                raise self._unusable(exc) from None
        if row is None:
            return None
        try:
            data = json.loads(row[0])
            if not _usable(data):
                return None  # e.g. an empty reply an older version stored: ask again
            return Completion(
                text=data["text"],
                usage=Usage(**data["usage"]),
                finish_reason=data["finish_reason"],
                latency_s=float(data["latency_s"]),
                model=data["model"],
                cached=True,
            )
        except (ValueError, KeyError, TypeError):
            return None  # an unreadable entry is a miss; the next put replaces it

    def put(self, key: str, request: Request, completion: Completion) -> None:
        """Store an answer; a reply without text is not one and is never stored."""
        if not completion.text:
            return
        data = {
            "text": completion.text,
            "usage": {
                "input_tokens": completion.usage.input_tokens,
                "output_tokens": completion.usage.output_tokens,
            },
            "finish_reason": completion.finish_reason,
            "latency_s": completion.latency_s,
            "model": completion.model,
        }
        with self._lock:
            try:
                db = self._db()
                db.execute(
                    "INSERT OR REPLACE INTO responses (key, backend, model, completion, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (key, request.backend, request.model, json.dumps(data), time.time()),
                )
                db.commit()
            except sqlite3.Error as exc:
                raise self._unusable(exc) from None

    def __len__(self) -> int:
        with self._lock:
            try:
                return int(self._db().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            except sqlite3.Error as exc:
                raise self._unusable(exc) from None

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):  # a broken database: nothing to save
                    conn.close()
