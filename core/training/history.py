"""history.json: one row per finished step (scores, decision, budget, per-stage timings
and tokens), rebuilt from the step directories after every step.

Derived, not accumulated: each row is read back from the files the step wrote
(gate.json, proposal.json, stages.json), so a resumed run's history is exactly an
uninterrupted run's, and a killed step (no state written) leaves no row behind once redone.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.atomic import write_json


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def history_rows(run_path: Path, steps_done: int) -> list[dict[str, Any]]:
    rows = []
    for step in range(steps_done):
        d = run_path / "steps" / f"{step:04d}"
        gate, proposal, stages = (
            _read(d / n) for n in ("gate.json", "proposal.json", "stages.json")
        )
        rows.append(
            {
                "step": step,
                "train_hard": stages.get("train_hard"),
                "budget": proposal.get("budget"),
                "lr": proposal.get("lr"),
                "edits_proposed": len(proposal.get("edits", [])),
                "accepted": bool(gate.get("accepted")),
                "gate_mode": gate.get("mode"),
                "candidate_score": gate.get("candidate_score"),
                "best_before": gate.get("best_before"),
                "reason": gate.get("reason"),
                "stages": stages.get("stages", {}),
            }
        )
    return rows


def write_history(run_path: Path, steps_done: int, baseline: float | None) -> None:
    write_json(
        run_path / "history.json",
        {"baseline_val": baseline, "steps": history_rows(run_path, steps_done)},
    )


class StageClock:
    """Per-stage wall time and the tokens the model client reported meanwhile (read from
    its ledger snapshot: the same numbers every call records, no accounting of our own)."""

    def __init__(self, ledger) -> None:
        self.ledger = ledger
        self.stages: dict[str, dict[str, Any]] = {}

    def _tokens(self) -> dict[str, dict[str, int]]:
        per_role = self.ledger.snapshot().per_role
        return {
            role: {k: int(u.get(k, 0)) for k in ("calls", "input_tokens", "output_tokens")}
            for role, u in per_role.items()
        }

    @contextmanager
    def stage(self, name: str):
        before, started = self._tokens(), time.monotonic()
        try:
            yield
        finally:
            after = self._tokens()
            spent = {}
            for role, usage in after.items():
                delta = {k: v - before.get(role, {}).get(k, 0) for k, v in usage.items()}
                if any(delta.values()):
                    spent[role] = delta
            self.stages[name] = {"seconds": round(time.monotonic() - started, 3), "tokens": spent}
