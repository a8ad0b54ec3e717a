"""Open another program's SQLite store to read it, never to write it.

First a read-only URI connection (`mode=ro`): it sees a WAL-mode store's committed
transactions and never creates, truncates or checkpoints anything. When that cannot read
(the owner holds an exclusive lock, or the `-shm` file cannot be opened read-only), the
database and its `-wal` are copied into a private temporary folder and the copy is read:
SQLite rebuilds the copy's index from the WAL there, the live files stay untouched.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

T = TypeVar("T")


def _read_only(path: Path) -> sqlite3.Connection:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=0.5)
    db.execute("PRAGMA query_only = ON")
    return db


@contextlib.contextmanager
def _snapshot(path: Path) -> Iterator[sqlite3.Connection]:
    with tempfile.TemporaryDirectory(prefix="skillopt-sqlite-") as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.exists():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        db = sqlite3.connect(copy, timeout=0.5)
        try:
            yield db
        finally:
            db.close()


def read_store(path: Path, query: Callable[[sqlite3.Connection], T]) -> tuple[T, bool]:
    """`query` run on the store; (its result, whether a snapshot copy was needed)."""
    try:
        db = _read_only(path)
        try:
            return query(db), False
        finally:
            db.close()
    except sqlite3.OperationalError:
        pass
    with _snapshot(path) as db:
        return query(db), True
