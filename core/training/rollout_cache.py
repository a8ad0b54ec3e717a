"""Per-item rollout results, persisted in the run directory, so a resumed or redone step
re-spends nothing.

The key is (skill hash, item id, split, target settings key, environment name+version):
another skill's result, another split's, another target model's or sampling settings',
or a result scored by an older environment version is never reused. Results that carry a
model error are not stored: a rerun should retry them, not replay the failure.

SQLite (WAL) because many rollouts finish concurrently and a `kill -9` must never leave a
half-written row: each insert is its own committed transaction.

It also records where each result was reported (table `logged`: rollout key, phase, step,
skill role), so a resumed run that redoes a step marks the events of the results it serves
again `replayed` and events.jsonl counts every rollout once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from pathlib import Path

from core.clean_text import clean_text
from core.environment.contract import RolloutResult

_FIELDS = dataclasses.fields(RolloutResult)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rollouts (
    key TEXT PRIMARY KEY,
    skill_hash TEXT NOT NULL,
    item_id TEXT NOT NULL,
    split TEXT NOT NULL,
    result TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS logged (
    key TEXT NOT NULL,
    origin TEXT NOT NULL,
    PRIMARY KEY (key, origin)
)
"""


def origin_of(phase: str, step: int, role: str = "") -> str:
    """A place in the run that logs rollouts (phase, step, skill role). A stored result
    already logged at the same place, served again, is a replay (a resumed run redoing
    its step), which its event says, not a new rollout."""
    return json.dumps([phase, step, role])


def rollout_key(
    skill_hash: str, item_id: str, split: str, target_key: str, env_key: str, repeat: int = 0
) -> str:
    """Repeat 0 keeps the key it always had; the gate's further repeats (gate.repeats)
    are samples of their own."""
    parts: list[object] = [skill_hash, item_id, split, target_key, env_key]
    if repeat:
        parts.append(repeat)
    raw = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class RolloutCache:
    def __init__(self, path: str | Path | None, *, target_key: str, env_key: str) -> None:
        """`path` None keeps results in memory only (for one-off evaluations)."""
        self.target_key = target_key
        self.env_key = env_key
        self._db = sqlite3.connect(":memory:" if path is None else str(path))
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def _key(self, skill_hash: str, item_id: str, split: str, repeat: int = 0) -> str:
        return rollout_key(skill_hash, item_id, split, self.target_key, self.env_key, repeat)

    def get(
        self, skill_hash: str, item_id: str, split: str, repeat: int = 0
    ) -> RolloutResult | None:
        key = self._key(skill_hash, item_id, split, repeat)
        row = self._db.execute("SELECT result FROM rollouts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        result = RolloutResult.from_dict(json.loads(row[0]))
        result.cached = True
        return result

    def note_logged(
        self, skill_hash: str, item_id: str, split: str, repeat: int, origin: str
    ) -> bool:
        """Record that an event at `origin` reports this item's result; False when one
        already did (the event about to be logged is a replay)."""
        key = self._key(skill_hash, item_id, split, repeat)
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO logged (key, origin) VALUES (?, ?)", (key, origin)
        )
        self._db.commit()
        return cursor.rowcount == 1

    def put(self, skill_hash: str, split: str, result: RolloutResult, repeat: int = 0) -> None:
        if result.error:
            return
        # Shallow: json.dumps copies anyway, and asdict's deep copy of the trajectory was
        # the largest cost of a rollout in bench/loop_overhead.py.
        data = {f.name: getattr(result, f.name) for f in _FIELDS}
        data["cached"] = False
        self._db.execute(
            "INSERT OR REPLACE INTO rollouts (key, skill_hash, item_id, split, result) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                self._key(skill_hash, result.item_id, split, repeat),
                skill_hash,
                result.item_id,
                split,
                clean_text(json.dumps(data, ensure_ascii=False)),
            ),
        )
        self._db.commit()

    def truncated_counts(self) -> dict[str, int]:
        """Stored results whose target reply ended at its token limit, by split: the
        score of such an answer is the score of a cut-off reply (docs/how-it-works/fidelity.md)."""
        rows = self._db.execute(
            "SELECT split, COUNT(*) FROM rollouts "
            "WHERE json_extract(result, '$.truncated') = 1 GROUP BY split ORDER BY split"
        ).fetchall()
        return {split: count for split, count in rows}

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM rollouts").fetchone()[0]

    def close(self) -> None:
        self._db.close()


def find_saved(path: str | Path, skill_hash: str, item_id: str, split: str) -> RolloutResult | None:
    """The newest stored result of an item under a skill, for readers (the TUI's trajectory
    view) that know no target or environment key: a run directory holds one run's results.
    Opened read-only, so a live run is never disturbed; None when nothing matches or the
    file cannot be read."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute(
                "SELECT result FROM rollouts WHERE skill_hash = ? AND item_id = ? AND split = ? "
                "ORDER BY rowid DESC LIMIT 1",
                (skill_hash, item_id, split),
            ).fetchone()
        finally:
            db.close()
        return None if row is None else RolloutResult.from_dict(json.loads(row[0]))
    except (sqlite3.Error, ValueError, TypeError):
        return None
