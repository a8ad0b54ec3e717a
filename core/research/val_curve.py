"""A run's val curve from events.jsonl: the best val after each step (starting from the
baseline) and each gated candidate's score, for the report's plot."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ValCurve:
    run_id: str
    best: list[tuple[int, float]] = field(default_factory=list)  # (step, best val); -1 = baseline
    candidates: list[tuple[int, float, bool]] = field(
        default_factory=list
    )  # (step, score, accepted)


def val_curve(run_id: str, events_path: Path, baseline: float | None) -> ValCurve:
    """`baseline` (summary.json's baseline_val) is the curve's first point, at step -1."""
    curve = ValCurve(run_id=run_id, best=[] if baseline is None else [(-1, float(baseline))])
    try:
        lines = events_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return curve
    for line in lines:
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "StepFinished":
            curve.best.append((int(data["step"]), float(data["best_val"])))
        elif kind == "GateDecided" and data.get("candidate_score") is not None:
            accepted = bool(data.get("accepted"))
            curve.candidates.append((int(data["step"]), float(data["candidate_score"]), accepted))
    return curve
