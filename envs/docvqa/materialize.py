"""`skillopt data materialize docvqa --source PATH`: the DocVQA validation rows of
`lmms-lab/DocVQA` (Parquet as the hub ships them, whose `image` column holds
`{bytes, path}`; or JSON / JSON Lines exports where `image` is `{"bytes": <base64>}` or
`{"path": <file relative to the export>}`), keyed by `questionId`. Page images are written
to `<out>/images/` under the manifest's file names."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from core.atomic import write_bytes
from core.environment.contract import EnvError
from envs.materialize import MaterializeReport, index_rows, read_records, write_splits


def _image_bytes(row: dict[str, Any], base: Path) -> bytes:
    image = row.get("image")
    if isinstance(image, dict) and image.get("bytes") is not None:
        data = image["bytes"]
        return data if isinstance(data, bytes) else base64.b64decode(data)
    if isinstance(image, dict) and image.get("path"):
        path = base / image["path"]
        if path.is_file():
            return path.read_bytes()
    raise EnvError(f"docvqa source row {row.get('questionId')!r} has no readable image")


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError(
            "docvqa: --download is not supported; pass your copy of lmms-lab/DocVQA as --source"
        )
    base = Path(source) if Path(source).is_dir() else Path(source).parent
    rows = [r for r in read_records(source) if r.get("questionId") is not None]
    by_id = index_rows(rows, lambda r: str(r["questionId"]), str(source))
    written = 0

    def convert(item_id: str, row: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        nonlocal written
        name = Path(entry.get("image_path") or f"q{item_id}.png").name
        write_bytes(Path(out) / "images" / name, _image_bytes(row, base))
        written += 1
        return {
            "id": item_id,
            "question": str(row["question"]),
            "answers": [str(a) for a in row.get("answers") or []],
            "image_path": f"images/{name}",
            "topic": entry.get("topic", ""),
        }

    report = write_splits("docvqa", manifest_dir, out, by_id, convert)
    report.files = written
    return report
