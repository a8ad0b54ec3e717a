"""A split's fingerprint: its size and a hash of its items as loaded.

Why the content and not only the ids: a test set whose item 17 was re-labelled keeps its
ids, and two numbers computed on it are not comparable. The hash covers each item's id,
task type, prompt, reference answer and extras, in the order the environment loaded them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from core.environment.contract import TaskItem


def item_record(item: TaskItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "task_type": item.task_type,
        "question": item.question,
        "answer": item.answer,
        "data": item.data,
    }


def split_fingerprint(items: Iterable[TaskItem]) -> dict[str, Any]:
    """{"size": n, "sha256": hex} of the items, in order."""
    digest = hashlib.sha256()
    size = 0
    for item in items:
        record = item_record(item) if dataclasses.is_dataclass(item) else dict(item)
        line = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
        digest.update(line.encode("utf-8", errors="surrogatepass") + b"\n")
        size += 1
    return {"size": size, "sha256": digest.hexdigest()}
