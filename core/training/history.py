"""history.json: one row per finished step (scores, decision, budget, per-stage timings
and tokens), rebuilt from the step directories after every step.

Derived, not accumulated: each row is read back from the files the step wrote
(gate.json, proposal.json, stages.json), so a resumed run's history is exactly an
uninterrupted run's, and a killed step (no state written) leaves no row behind once redone.
One number does add up across attempts: a step's stages sum its attempts, whose calls were
made (StageClock).
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


ATTEMPTS_FILE = "stages.attempts.json"


def _add(total: dict[str, Any], stage: dict[str, Any]) -> dict[str, Any]:
    """Two measurements of one stage, summed (seconds, and each role's counts)."""
    tokens = {role: dict(usage) for role, usage in total.get("tokens", {}).items()}
    for role, usage in stage.get("tokens", {}).items():
        row = tokens.setdefault(role, {})
        for key, value in usage.items():
            row[key] = row.get(key, 0) + value
    seconds = total.get("seconds", 0) + stage.get("seconds", 0)
    return {"seconds": round(seconds, 3), "tokens": tokens}


class StageClock:
    """Per-stage wall time and the tokens the model client reported meanwhile (read from
    its ledger snapshot: the same numbers every call records, no accounting of our own).

    A step can take several attempts: a handoff run stops once per round of answers, a
    budget cap stops mid-step, and each time the step is redone. The calls of an abandoned
    attempt were made (and a handoff answer counts once, in the round that first reads it),
    so a stage that fails keeps what this attempt measured in the step's
    `stages.attempts.json`, and the finished step's stages sum every attempt. Then
    `calls - cache_hits` is the step's calls sent, whatever the rounds; a redone attempt's
    response-cache hits on an earlier attempt's calls count as hits."""

    def __init__(self, ledger, step_dir: Path | None = None) -> None:
        self.ledger = ledger
        self.stages: dict[str, dict[str, Any]] = {}
        self._attempts = step_dir / ATTEMPTS_FILE if step_dir is not None else None
        self._earlier = _read(self._attempts).get("stages", {}) if self._attempts else {}

    def _tokens(self) -> dict[str, dict[str, int]]:
        # Early work running beside the step (the baseline, a test evaluation) is not the
        # step's: only calls on the critical path count (core/models/priority_pool.py).
        per_role = self.ledger.per_role_on_path()
        return {
            role: {
                k: int(u.get(k, 0))
                for k in ("calls", "cache_hits", "input_tokens", "output_tokens")
            }
            for role, u in per_role.items()
        }

    def totals(self) -> dict[str, dict[str, Any]]:
        """Every stage of the step, summed over its attempts (this one included)."""
        out = {name: _add({}, stage) for name, stage in self._earlier.items()}
        for name, stage in self.stages.items():
            out[name] = _add(out.get(name, {}), stage)
        return out

    def finished(self) -> None:
        """The step is done: its attempts are in `totals()`, never counted again."""
        if self._attempts is not None:
            self._attempts.unlink(missing_ok=True)

    @contextmanager
    def stage(self, name: str):
        before, started = self._tokens(), time.monotonic()
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            after = self._tokens()
            spent = {}
            for role, usage in after.items():
                delta = {k: v - before.get(role, {}).get(k, 0) for k, v in usage.items()}
                if any(delta.values()):
                    spent[role] = delta
            self.stages[name] = {"seconds": round(time.monotonic() - started, 3), "tokens": spent}
            if failed and self._attempts is not None:
                self._attempts.parent.mkdir(parents=True, exist_ok=True)
                write_json(self._attempts, {"stages": self.totals()})
