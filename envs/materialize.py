"""Turning a user's local copy of a public dataset into our data directory.

Each benchmark's materialiser reads the files as the dataset's publishers distribute them,
indexes the rows by the id the manifest uses, and hands them here. `write_splits` checks the
rows against the published manifest before writing anything: a manifest id missing from
the source is an error that names how many and which; source rows that no split lists are
counted and reported, never silently dropped from the report. `materialize_into` builds the
whole data directory aside and swaps it in at the end, so an error anywhere (a bad row, a
file outside the source, a full disk) leaves the old data as it was and no half split is
ever used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import write_json
from core.environment.contract import SPLITS, EnvError
from core.install_hint import pip_install
from core.words import counted
from envs.source_root import SourceRoot, parse_json, read_source_text
from envs.split_data import ITEMS_FILE, manifest_ids, read_items_file
from envs.staged_output import staged_output

Row = dict[str, Any]
RECORD_SUFFIXES = (".jsonl", ".json", ".parquet")


@dataclass
class MaterializeReport:
    env: str
    out: Path
    counts: dict[str, int]
    extra_ids: int = 0  # source rows that no split of the manifest lists
    extra_examples: list[str] = field(default_factory=list)
    files: int = 0  # side files copied (page images, source documents, workbooks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "out": str(self.out),
            "counts": self.counts,
            "extra_ids": self.extra_ids,
            "extra_examples": self.extra_examples,
            "files": self.files,
        }

    def summary(self) -> str:
        counts = ", ".join(f"{s} {n}" for s, n in self.counts.items())
        line = f"{self.env}: wrote {self.out} ({counts}"
        line += f"; {counted(self.files, 'file')})" if self.files else ")"
        if self.extra_ids:
            shown = ", ".join(self.extra_examples)
            line += (
                f"; {self.extra_ids} source rows are in no split and were left out (e.g. {shown})"
            )
        return line


def materialize_into(
    out: Path, source: Path | None, build: Callable[[Path], MaterializeReport]
) -> MaterializeReport:
    """Run `build(folder)` on an empty staging folder and swap it in as `out` only when it
    returns: a bad row anywhere leaves the old `out` exactly as it was."""
    with staged_output(out, source) as stage:
        report = build(stage)
    report.out = Path(os.path.abspath(out))
    return report


def source_root(source: Path) -> SourceRoot:
    """The root the source's files are confined to: the folder itself, or a file's folder."""
    source = Path(source)
    if not source.exists():
        raise EnvError(f"--source {source}: no such file or folder")
    return SourceRoot(source if source.is_dir() else source.parent)


def text_of(row: Row, name: str, where: str) -> str:
    """A required text field of a source row (numbers are taken as their text)."""
    value = row.get(name)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        shown = "missing" if value is None else f"a {type(value).__name__}"
        raise EnvError(f"{where}: field {name!r} is {shown}, expected text")
    return str(value)


def texts_of(value: Any, name: str, where: str) -> list[str]:
    """A list-of-text field (a lone text is a list of one; absent is empty)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items):
        raise EnvError(f"{where}: field {name!r} must be text or a list of texts")
    return [str(v) for v in items]


def read_records(source: Path) -> list[Row]:
    """Rows from a file or every record file under a folder: JSON arrays, JSON Lines, and
    Parquet (what the Hugging Face hub distributes; needs `pyarrow`). Files under a folder
    that are symlinks out of it are not read."""
    source = Path(source)
    root = source_root(source)
    if source.is_dir():
        files = [p for p in root.files("*") if p.suffix in RECORD_SUFFIXES]
    elif source.is_file():
        files = [source]
    else:
        raise EnvError(f"--source {source}: not a regular file or folder")
    rows: list[Row] = []
    for path in files:
        rows.extend(_read_file(path))
    if not rows:
        raise EnvError(
            f"--source {source}: no records found (looked for {', '.join(RECORD_SUFFIXES)})"
        )
    return rows


def _read_file(path: Path) -> list[Row]:
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise EnvError(
                f"{path}: reading Parquet needs pyarrow (`{pip_install()} pyarrow`), "
                "or export the rows to JSON Lines first"
            ) from None
        try:
            rows = pq.read_table(path).to_pylist()
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise EnvError(f"{path}: not a readable Parquet file ({exc})") from None
        if not all(isinstance(r, dict) for r in rows):
            raise EnvError(f"{path}: expected a table of records")
        return rows
    text = read_source_text(path)
    if path.suffix == ".jsonl":
        lines = enumerate(text.splitlines(), 1)
        data: Any = [parse_json(line, path, number) for number, line in lines if line.strip()]
    else:
        data = parse_json(text, path) if text.strip() else []
    if isinstance(data, dict):
        return []  # a metadata file (e.g. dataset_info.json), not records
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise EnvError(f"{path}: expected records (a JSON array of objects or JSON Lines)")
    return data


def index_rows(rows: Iterable[Row], key: Callable[[Row], str | None], where: str) -> dict[str, Row]:
    """Rows by id (the first row of a repeated id wins); a row without an id is an error."""
    by_id: dict[str, Row] = {}
    for row in rows:
        item_id = key(row)
        if item_id is None or item_id == "":
            raise EnvError(f"{where}: a source row has no id: {sorted(map(str, row))[:6]}")
        by_id.setdefault(str(item_id), row)
    return by_id


def write_splits(
    env_name: str,
    manifest_dir: Path,
    out: Path,
    rows_by_id: dict[str, Row],
    convert: Callable[[str, Row, dict[str, Any]], Row],
) -> MaterializeReport:
    """Write `<out>/<split>/items.json` for every split, items in manifest order.
    `convert(id, source_row, manifest_entry)` builds the stored item (it must keep `id`)."""
    entries: dict[str, list[dict[str, Any]]] = {}
    missing: dict[str, list[str]] = {}
    for split in SPLITS:
        manifest_ids(manifest_dir, split)  # the manifest's shape and unique ids
        manifest = read_items_file(Path(manifest_dir) / split / ITEMS_FILE)
        entries[split] = manifest
        missing[split] = [e["id"] for e in manifest if e["id"] not in rows_by_id]
    total_missing = sum(len(v) for v in missing.values())
    if total_missing:
        per_split = ", ".join(f"{s} {len(v)}" for s, v in missing.items() if v)
        first = next(v[0] for v in missing.values() if v)
        raise EnvError(
            f"{env_name}: {total_missing} manifest id(s) are not in the source ({per_split}), "
            f"e.g. {first!r}; nothing was written: check that --source is the full dataset"
        )
    listed = {e["id"] for split in SPLITS for e in entries[split]}
    extra = sorted(set(rows_by_id) - listed)
    counts = {}
    for split in SPLITS:
        items = [convert(e["id"], rows_by_id[e["id"]], e) for e in entries[split]]
        write_json(Path(out) / split / ITEMS_FILE, items)
        counts[split] = len(items)
    return MaterializeReport(
        env=env_name, out=Path(out), counts=counts, extra_ids=len(extra), extra_examples=extra[:3]
    )
