"""`skillopt data materialize livemath --source DIR`: LiveMathematicianBench's monthly
`qa_<month>_final.json` files (anywhere under DIR), keyed `<month>:<no>` as the published
manifest is, normalised to `{id, question, choices, correct_choice, theorem_type, month}`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from envs.materialize import MaterializeReport, materialize_into, source_root, write_splits
from envs.source_root import read_source_json

_LABELS = "ABCDEFGHIJ"


def _choices(raw: Any, where: str) -> list[dict[str, str]]:
    if isinstance(raw, dict):  # {"A": "...", "B": "..."}
        return [{"label": str(k).strip(), "text": str(v).strip()} for k, v in sorted(raw.items())]
    if not isinstance(raw, list) or len(raw) > len(_LABELS):
        raise EnvError(f"{where}: choices must be a list of at most {len(_LABELS)} or a mapping")
    out = []
    for index, choice in enumerate(raw):
        if isinstance(choice, dict):
            label = str(choice.get("label") or _LABELS[index]).strip()
            text = str(choice.get("text") or choice.get("content") or "").strip()
        else:
            label, text = _LABELS[index], str(choice).strip()
        out.append({"label": label.upper().rstrip(".):"), "text": text})
    return out


def _normalise(row: Any, where: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise EnvError(f"{where}: a question is a {type(row).__name__}, expected an object")
    mcq = row.get("mcq") if isinstance(row.get("mcq"), dict) else row
    correct = mcq.get("correct_choice") or {}
    label = correct.get("label", "") if isinstance(correct, dict) else str(correct)
    types = row.get("theorem_type") or []
    item_id = f"{row.get('month')}:{row.get('no')}"
    return {
        "id": item_id,
        "month": str(row.get("month", "")),
        "question": str(mcq.get("question", "")).strip(),
        "choices": _choices(mcq.get("choices") or [], f"{where} question {item_id}"),
        "correct_choice": {"label": str(label).strip().upper().rstrip(".):")},
        "theorem_type": [str(t) for t in types] if isinstance(types, list) else [str(types)],
    }


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError(
            "livemath: --download is not supported; download the qa_*_final.json files of "
            "LiveMathematicianBench/LiveMathematicianBench and pass their folder as --source"
        )
    root = source_root(source)
    files = root.files("qa_*_final.json") if Path(source).is_dir() else [Path(source)]
    if not files or not files[0].is_file():
        raise EnvError(f"--source {source}: no qa_*_final.json files found")
    by_id: dict[str, dict[str, Any]] = {}
    for path in files:
        rows = read_source_json(path)
        if not isinstance(rows, list):
            raise EnvError(f"{path}: expected a JSON array of questions")
        for row in rows:
            item = _normalise(row, str(path))
            by_id.setdefault(item["id"], item)
    return materialize_into(
        out,
        source,
        lambda stage: write_splits("livemath", manifest_dir, stage, by_id, lambda _i, it, _e: it),
    )
