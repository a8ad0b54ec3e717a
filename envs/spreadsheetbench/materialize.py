"""`skillopt data materialize spreadsheetbench --source PATH`: PATH is the SpreadsheetBench
Verified 400 release as published (`spreadsheetbench_verified_400.tar.gz`, or the folder it
extracts to): `dataset.json` (rows with id, instruction, instruction_type, answer_position)
and `spreadsheet/<id>/<n>_<id>_input.xlsx` + `<n>_<id>_answer.xlsx` test cases. Writes the
items and copies each item's workbooks to `<out>/spreadsheet/<id>/`."""

from __future__ import annotations

import json
import re
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from envs.materialize import MaterializeReport, index_rows, write_splits

_CASE = re.compile(r"^(\d+)_(.+)_input\.xlsx$")


def _root(source: Path, scratch: Path) -> Path:
    if source.is_file() and source.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(source) as archive:
            archive.extractall(scratch, filter="data")
        source = scratch
    found = sorted(source.rglob("dataset.json"))
    if not found:
        raise EnvError(f"--source {source}: no dataset.json found")
    return found[0].parent


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError(
            "spreadsheetbench: --download is not supported; download "
            "spreadsheetbench_verified_400.tar.gz from KAKA22/SpreadsheetBench and pass it as --source"
        )
    with tempfile.TemporaryDirectory() as scratch:
        root = _root(Path(source), Path(scratch))
        rows = json.loads((root / "dataset.json").read_text(encoding="utf-8"))
        by_id = index_rows(rows, lambda r: str(r.get("id", "")), str(root / "dataset.json"))
        copied = 0

        def convert(item_id: str, row: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
            nonlocal copied
            folder = root / str(
                row.get("spreadsheet_path")
                or entry.get("spreadsheet_path")
                or f"spreadsheet/{item_id}"
            )
            cases = []
            for path in sorted(folder.glob("*_input.xlsx")):
                match = _CASE.match(path.name)
                answer = (
                    path.with_name(f"{match.group(1)}_{match.group(2)}_answer.xlsx")
                    if match
                    else None
                )
                if answer is None or not answer.is_file():
                    continue
                target = Path(out) / "spreadsheet" / item_id
                target.mkdir(parents=True, exist_ok=True)
                for file in (path, answer):
                    shutil.copyfile(file, target / file.name)
                    copied += 1
                rel = f"spreadsheet/{item_id}"
                cases.append({"input": f"{rel}/{path.name}", "answer": f"{rel}/{answer.name}"})
            if not cases:
                raise EnvError(
                    f"spreadsheetbench: {item_id} has no input/answer workbook pair in {folder}"
                )
            return {
                "id": item_id,
                "instruction": str(row["instruction"]),
                "instruction_type": str(row.get("instruction_type", "")),
                "answer_position": str(row["answer_position"]),
                "cases": cases,
            }

        report = write_splits("spreadsheetbench", manifest_dir, out, by_id, convert)
    report.files = copied
    return report
