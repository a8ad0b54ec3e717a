"""`skillopt data materialize livemath --source DIR`: LiveMathematicianBench's monthly
`qa_<month>_final.json` files (anywhere under DIR), keyed `<month>:<no>` as the published
manifest is, normalised to `{id, question, choices, correct_choice, theorem_type, month}`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from envs.materialize import MaterializeReport, write_splits

_LABELS = "ABCDEFGHIJ"


def _choices(raw: Any) -> list[dict[str, str]]:
    if isinstance(raw, dict):  # {"A": "...", "B": "..."}
        return [{"label": str(k).strip(), "text": str(v).strip()} for k, v in sorted(raw.items())]
    out = []
    for index, choice in enumerate(raw or []):
        if isinstance(choice, dict):
            label = str(choice.get("label") or _LABELS[index]).strip()
            text = str(choice.get("text") or choice.get("content") or "").strip()
        else:
            label, text = _LABELS[index], str(choice).strip()
        out.append({"label": label.upper().rstrip(".):"), "text": text})
    return out


def _normalise(row: dict[str, Any]) -> dict[str, Any]:
    mcq = row.get("mcq") if isinstance(row.get("mcq"), dict) else row
    correct = mcq.get("correct_choice") or {}
    label = correct.get("label", "") if isinstance(correct, dict) else str(correct)
    types = row.get("theorem_type") or []
    return {
        "id": f"{row.get('month')}:{row.get('no')}",
        "month": str(row.get("month", "")),
        "question": str(mcq.get("question", "")).strip(),
        "choices": _choices(mcq.get("choices")),
        "correct_choice": {"label": str(label).strip().upper().rstrip(".):")},
        "theorem_type": types if isinstance(types, list) else [str(types)],
    }


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError(
            "livemath: --download is not supported; download the qa_*_final.json files of "
            "LiveMathematicianBench/LiveMathematicianBench and pass their folder as --source"
        )
    files = (
        sorted(Path(source).rglob("qa_*_final.json")) if Path(source).is_dir() else [Path(source)]
    )
    if not files or not files[0].is_file():
        raise EnvError(f"--source {source}: no qa_*_final.json files found")
    by_id: dict[str, dict[str, Any]] = {}
    for path in files:
        rows = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise EnvError(f"{path}: expected a JSON array of questions")
        for row in rows:
            item = _normalise(row)
            by_id.setdefault(item["id"], item)
    return write_splits("livemath", manifest_dir, out, by_id, lambda _id, item, _e: item)
