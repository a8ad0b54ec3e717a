"""The optimizer's edits that did not land in a night's run (an edit whose target text is
not in the skill, an ambiguous or protected one, an invalid one). Each step's
apply_report.json records them, but a person reads the night's summary, not events.jsonl:
without this a night says "no candidate beat the current skill" and never that the edit
it wanted could not even be applied."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any


def unlanded_edits(run_dir: Path) -> list[dict[str, Any]]:
    """{step, op, status, reason} for every edit a step could not apply, in step order."""
    out: list[dict[str, Any]] = []
    for report in sorted(Path(run_dir).glob("steps/*/apply_report.json")):
        outcomes: Any = []
        with contextlib.suppress(OSError, ValueError):
            outcomes = json.loads(report.read_text(encoding="utf-8"))
        for o in outcomes if isinstance(outcomes, list) else []:
            if isinstance(o, dict) and o.get("status") not in (None, "applied"):
                out.append(
                    {
                        "step": int(report.parent.name) if report.parent.name.isdigit() else 0,
                        "op": str(o.get("op") or "?"),
                        "status": str(o["status"]),
                        "reason": str(o.get("reason") or o["status"])[:200],
                    }
                )
    return out


def unlanded_line(skill: str, edits: list[dict[str, Any]]) -> str:
    """One console line: how many edits did not land and why (the distinct reasons)."""
    reasons = list(dict.fromkeys(f"{e['op']}: {e['reason']}" for e in edits))
    return f"{skill}: {len(edits)} edit(s) did not land — " + "; ".join(reasons)
