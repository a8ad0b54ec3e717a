"""`skillopt data materialize docvqa --source PATH`: the DocVQA validation rows of
`lmms-lab/DocVQA` (Parquet as the hub ships them, whose `image` column holds
`{bytes, path}`; or JSON / JSON Lines exports where `image` is `{"bytes": <base64>}` or
`{"path": <file relative to the export>}`), keyed by `questionId`. Page images are written
to `<out>/images/` under the manifest's file names. An image path must name a file inside
the export (never an absolute path or one that climbs out of it)."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

from core.atomic import write_bytes
from core.environment.contract import EnvError
from envs.materialize import (
    MaterializeReport,
    index_rows,
    materialize_into,
    read_records,
    source_root,
    text_of,
    texts_of,
    write_splits,
)
from envs.source_root import SourceRoot, read_source_bytes


def _image_bytes(row: dict[str, Any], root: SourceRoot, where: str) -> bytes:
    image = row.get("image")
    if isinstance(image, dict) and image.get("bytes") is not None:
        data = image["bytes"]
        if isinstance(data, bytes):
            return data
        if not isinstance(data, str):
            raise EnvError(f"{where}: image bytes are a {type(data).__name__}, expected base64")
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise EnvError(f"{where}: image bytes are not valid base64") from None
    if isinstance(image, dict) and image.get("path"):
        return read_source_bytes(root.resolve(image["path"], f"{where}: image.path"))
    raise EnvError(f"{where}: the row has no image (expected image.bytes or image.path)")


def _image_name(item_id: str, entry: dict[str, Any]) -> str:
    name = Path(str(entry.get("image_path") or f"q{item_id}.png")).name
    if name in ("", ".", ".."):
        raise EnvError(f"docvqa manifest entry {item_id!r}: image_path {name!r} is not a file name")
    return name


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError(
            "docvqa: --download is not supported; pass your copy of lmms-lab/DocVQA as --source"
        )
    root = source_root(source)
    rows = [r for r in read_records(source) if r.get("questionId") is not None]
    by_id = index_rows(rows, lambda r: str(r["questionId"]), str(source))

    def build(stage: Path) -> MaterializeReport:
        written = 0

        def convert(item_id: str, row: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
            nonlocal written
            where = f"docvqa source row {item_id!r}"
            name = _image_name(item_id, entry)
            item = {
                "id": item_id,
                "question": text_of(row, "question", where),
                "answers": texts_of(row.get("answers"), "answers", where),
                "image_path": f"images/{name}",
                "topic": entry.get("topic", ""),
            }
            write_bytes(stage / "images" / name, _image_bytes(row, root, where))
            written += 1
            return item

        report = write_splits("docvqa", manifest_dir, stage, by_id, convert)
        report.files = written
        return report

    return materialize_into(out, source, build)
