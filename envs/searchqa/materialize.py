"""`skillopt data materialize searchqa --source PATH`: the public `lucadiliello/searchqa`
rows (Parquet as the hub distributes them, or JSON / JSON Lines exports) joined with the
published id manifest on their `key` field, written as `{id, question, context, answers}`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from core.install_hint import install_extra
from envs.materialize import (
    MaterializeReport,
    index_rows,
    materialize_into,
    read_records,
    text_of,
    texts_of,
    write_splits,
)

HF_DATASET = "lucadiliello/searchqa"


def _convert(item_id: str, row: dict[str, Any], _entry: dict[str, Any]) -> dict[str, Any]:
    where = f"searchqa source row {item_id!r}"
    if "answers" not in row:
        raise EnvError(f"{where} has no 'answers' field")
    return {
        "id": item_id,
        "question": text_of(row, "question", where),
        "context": text_of(row, "context", where),
        "answers": texts_of(row["answers"], "answers", where),
    }


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    rows = _download() if download else read_records(source)
    by_id = index_rows(rows, lambda r: r.get("key") or r.get("id"), str(source or HF_DATASET))
    return materialize_into(
        out,
        None if download else source,
        lambda stage: write_splits("searchqa", manifest_dir, stage, by_id, _convert),
    )


def _download() -> list[dict[str, Any]]:
    try:
        from datasets import load_dataset
    except ImportError:
        raise EnvError(
            f"--download needs the `datasets` library (`{install_extra('download')}`); or download "
            f"{HF_DATASET} yourself and pass --source"
        ) from None
    loaded = load_dataset(HF_DATASET)
    return [dict(row) for split in loaded for row in loaded[split]]
