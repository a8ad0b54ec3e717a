"""`skillopt data materialize spreadsheetbench --source PATH`: PATH is the SpreadsheetBench
Verified 400 release as published (`spreadsheetbench_verified_400.tar.gz`, or the folder it
extracts to): `dataset.json` (rows with id, instruction, instruction_type, answer_position)
and `spreadsheet/<id>/<n>_<id>_input.xlsx` + `<n>_<id>_answer.xlsx` test cases. Writes the
items and copies each item's workbooks to `<out>/spreadsheet/<id>/`. A row's
`spreadsheet_path` must be a folder inside the release; the archive's members are checked
before anything is unpacked."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from envs.materialize import MaterializeReport, index_rows, materialize_into, text_of, write_splits
from envs.safe_tar import extract_checked
from envs.source_root import SourceRoot, read_source_json

_CASE = re.compile(r"^(\d+)_(.+)_input\.xlsx$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _root(source: Path, scratch: Path) -> SourceRoot:
    if source.is_file() and source.name.endswith((".tar.gz", ".tgz", ".tar")):
        extract_checked(source, scratch)
        source = scratch
    elif not source.is_dir():
        raise EnvError(f"--source {source}: expected the release folder or its .tar.gz")
    release = SourceRoot(source)
    found = release.files("dataset.json")
    if not found:
        raise EnvError(f"--source {source}: no dataset.json found")
    return SourceRoot(found[0].parent)


def _rows(root: SourceRoot) -> list[dict[str, Any]]:
    path = root.root / "dataset.json"
    rows = read_source_json(path)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise EnvError(f"{path}: expected a JSON array of objects")
    return rows


def _cases(folder: Path, root: SourceRoot) -> list[tuple[Path, Path]]:
    """The (input, answer) workbook pairs of an item's folder, both regular files inside
    the release."""
    pairs = []
    for path in sorted(folder.glob("*_input.xlsx")):
        match = _CASE.match(path.name)
        if not match:
            continue
        answer = path.with_name(f"{match.group(1)}_{match.group(2)}_answer.xlsx")
        if all(root.contains(p) and p.is_file() for p in (path, answer)):
            pairs.append((path, answer))
    return pairs


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
        by_id = index_rows(_rows(root), lambda r: str(r.get("id", "")), str(root.root))

        def build(stage: Path) -> MaterializeReport:
            copied = 0

            def convert(item_id: str, row: dict[str, Any], entry: dict[str, Any]) -> dict:
                nonlocal copied
                where = f"spreadsheetbench row {item_id!r}"
                if not _SAFE_ID.match(item_id):
                    raise EnvError(f"{where}: the id is not a plain folder name")
                named = (
                    row.get("spreadsheet_path")
                    or entry.get("spreadsheet_path")
                    or f"spreadsheet/{item_id}"
                )
                folder = root.resolve(named, f"{where}: spreadsheet_path", folder=True)
                pairs = _cases(folder, root)
                if not pairs:
                    raise EnvError(f"{where}: no input/answer workbook pair in {folder}")
                item = {
                    "id": item_id,
                    "instruction": text_of(row, "instruction", where),
                    "instruction_type": str(row.get("instruction_type") or ""),
                    "answer_position": text_of(row, "answer_position", where),
                    "cases": [],
                }
                target = stage / "spreadsheet" / item_id
                target.mkdir(parents=True, exist_ok=True)
                for path, answer in pairs:
                    for file in (path, answer):
                        shutil.copyfile(file, target / file.name)
                        copied += 1
                    rel = f"spreadsheet/{item_id}"
                    item["cases"].append(
                        {"input": f"{rel}/{path.name}", "answer": f"{rel}/{answer.name}"}
                    )
                return item

            report = write_splits("spreadsheetbench", manifest_dir, stage, by_id, convert)
            report.files = copied
            return report

        return materialize_into(out, source, build)
