"""The night's gate when the held-out tasks hold what the person corrected.

A mean score over a handful of graded items moves by noise (a judge's 0.1); what the
person wants to know is narrower: does the candidate do what they asked for more often,
and does it break nothing they were happy with? So, where the val split holds preference
occurrences (sleep/held_out.gate_roles), a candidate is accepted only when
- its held-out occurrences pass (metric ≥ the pass mark) more often than the current
  file's, and
- no guard (a task accepted without correction) that passed with the current file fails.
The engine asks the environment for this rule (`gate_rule`, core/training/candidate_gate.py)
in place of "the mean beats the best"; without occurrences the engine's own gate stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PreferenceGate:
    roles: Mapping[str, str]  # val item id -> "occurrence" | "guard"
    pass_mark: float

    def _passes(self, metrics: Mapping[str, float], item: str) -> bool:
        return metrics.get(item, 0.0) >= self.pass_mark

    def __call__(self, before: Mapping[str, float], after: Mapping[str, float]) -> tuple[bool, str]:
        """(accepted, why) for a candidate scoring `after` against the current `before`."""
        occurrences = sorted(i for i, r in self.roles.items() if r == "occurrence")
        guards = sorted(i for i, r in self.roles.items() if r == "guard")
        was = sum(self._passes(before, i) for i in occurrences)
        now = sum(self._passes(after, i) for i in occurrences)
        broken = [g for g in guards if self._passes(before, g) and not self._passes(after, g)]
        counts = (
            f"held-out preference occurrences pass {now}/{len(occurrences)} "
            f"(current file {was}/{len(occurrences)})"
        )
        if broken:
            return False, f"rejected: {counts}, but guard(s) regressed: {', '.join(broken)}"
        if now <= was:
            return False, f"rejected: {counts}: not more often"
        return True, f"accepted: {counts}; no guard regressed ({len(guards)} guard(s))"
