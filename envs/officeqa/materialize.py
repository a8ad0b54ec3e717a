"""`skillopt data materialize officeqa --source DIR`: DIR holds OfficeQA's `officeqa_full.csv`
(gated on the hub: download it with your authorised account) and the Treasury Bulletin text
files it cites (`treasury_bulletin_<year>_<month>.txt`, anywhere under DIR; a link out of DIR
is not followed). Writes the items keyed by `uid` and copies each item's source files into
`<out>/docs/`."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from envs.materialize import (
    MaterializeReport,
    index_rows,
    materialize_into,
    source_root,
    write_splits,
)
from envs.source_root import read_source_text

CSV_NAME = "officeqa_full.csv"


def _list_field(value: Any) -> list[str]:
    text = str(value or "").strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            return [str(v).strip() for v in json.loads(text) if str(v).strip()]
        except (json.JSONDecodeError, RecursionError, TypeError):
            pass
    return [part.strip() for part in re.split(r"[\n,]", text) if part.strip()]


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    text = read_source_text(path)
    try:
        return list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise EnvError(f"{path}: malformed CSV ({exc})") from None


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError("officeqa: the dataset is gated; download it yourself and pass --source DIR")
    source = Path(source)
    root = source_root(source)
    found = root.files(CSV_NAME) if source.is_dir() else [source]
    if not found or not found[0].is_file():
        raise EnvError(f"--source {source}: {CSV_NAME} not found")
    rows = _csv_rows(found[0])
    by_id = index_rows(rows, lambda r: (r.get("uid") or r.get("id") or "").strip(), str(found[0]))
    docs = {p.name: p for p in root.files("*.txt")} if source.is_dir() else {}

    def build(stage: Path) -> MaterializeReport:
        copied: set[str] = set()

        def convert(item_id: str, row: dict[str, Any], _entry: dict[str, Any]) -> dict[str, Any]:
            files = _list_field(row.get("source_files"))
            for name in files:
                if name not in docs:
                    raise EnvError(
                        f"officeqa: {item_id} cites {name!r}, which is not under {source}"
                    )
                if name not in copied:
                    (stage / "docs").mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(docs[name], stage / "docs" / name)
                    copied.add(name)
            answer = str(row.get("answer") or row.get("ground_truth") or "").strip()
            return {
                "id": item_id,
                "question": str(row.get("question") or "").strip(),
                "answers": [answer] if answer else [],
                "source_files": files,
                "source_docs": _list_field(row.get("source_docs")),
                "category": str(row.get("category") or row.get("difficulty") or "officeqa"),
            }

        report = write_splits("officeqa", manifest_dir, stage, by_id, convert)
        report.files = len(copied)
        return report

    return materialize_into(out, source, build)
