"""`skillopt data materialize searchqa --source PATH`: the public `lucadiliello/searchqa`
rows (Parquet as the hub distributes them, or JSON / JSON Lines exports) joined with the
published id manifest on their `key` field, written as `{id, question, context, answers}`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from envs.materialize import MaterializeReport, index_rows, read_records, write_splits

HF_DATASET = "lucadiliello/searchqa"


def _convert(item_id: str, row: dict[str, Any], _entry: dict[str, Any]) -> dict[str, Any]:
    try:
        answers = row["answers"]
        return {
            "id": item_id,
            "question": str(row["question"]),
            "context": str(row["context"]),
            "answers": [str(a) for a in (answers if isinstance(answers, list) else [answers])],
        }
    except KeyError as exc:
        raise EnvError(f"searchqa source row {item_id!r} has no {exc} field") from None


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    rows = _download() if download else read_records(source)
    by_id = index_rows(rows, lambda r: r.get("key") or r.get("id"), str(source or HF_DATASET))
    return write_splits("searchqa", manifest_dir, out, by_id, _convert)


def _download() -> list[dict[str, Any]]:
    try:
        from datasets import load_dataset
    except ImportError:
        raise EnvError(
            "--download needs the `datasets` library (`pip install 'skillopt-tui[download]'`); or download "
            f"{HF_DATASET} yourself and pass --source"
        ) from None
    loaded = load_dataset(HF_DATASET)
    return [dict(row) for split in loaded for row in loaded[split]]
