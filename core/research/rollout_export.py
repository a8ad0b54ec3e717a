"""Every rollout of the given runs, for analysis elsewhere (`skillopt report --csv /
--jsonl`): one row per scored rollout as events.jsonl logged it, with the run's id."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from core.research.item_scores import RolloutRow, read_rollouts

COLUMNS = ["run_id", *(f.name for f in dataclasses.fields(RolloutRow))]


def rollout_rows(runs: Sequence[tuple[str, Path]]) -> Iterator[dict[str, Any]]:
    for run_id, path in runs:
        for row in read_rollouts(path / "events.jsonl"):
            yield {"run_id": run_id, **dataclasses.asdict(row)}


def rollouts_csv(runs: Sequence[tuple[str, Path]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rollout_rows(runs))
    return out.getvalue()


def rollouts_jsonl(runs: Sequence[tuple[str, Path]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rollout_rows(runs))
