"""How the engine hands an accepted candidate to whatever keeps it for review.

The trainer calls `stager.stage(candidate)` once per accepted candidate. Without a skills
repository the run directory keeps it as a plain file; with one, it becomes a commit on
`staged/<run-id>` (core.skills_repo). Both return a reference the events can carry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class StagedCandidate:
    run_id: str
    step: int
    skill_text: str
    val_before: float
    val_after: float
    items_improved: int
    items_regressed: int
    edits: list[dict[str, Any]] = field(default_factory=list)  # with their rationales
    summary: str = ""  # one line for the commit subject
    source_sessions: list[str] = field(default_factory=list)  # Sleep only
    # More evidence for the commit's trailers (Sleep: how its tasks were routed, the night).
    trailers: dict[str, str] = field(default_factory=dict)
    # What produced it: "step" (a step's candidate), "slow_update" (an epoch end's gated
    # guidance, staged at the epoch's last step) or "final" (the finish's promotion). One
    # step can stage both a "step" and a "slow_update" candidate.
    source: str = "step"
    # How it was accepted: "strict" (beat the best on val) or "disabled" (the gate.enabled=false ablation: every
    # candidate is taken, so val_after may be lower than val_before).
    gate: str = "strict"
    # How many val items the gate scored it on (None: not recorded). With the improved and
    # regressed counts it gives the commit's `Val-Items` and `Evidence: p=…` trailers.
    val_items: int | None = None
    # The val items whose score changed: {id, question, replay, before, after, decided_by}
    # (core/training/candidate_gate.moved_items), listed in the commit's body.
    moved: list[dict[str, Any]] = field(default_factory=list)
    # More of the commit's body, after the edits' rationales (Sleep: the preferences the
    # candidate addresses).
    notes: str = ""


class Stager(Protocol):
    def stage(self, candidate: StagedCandidate) -> str:
        """Keep the candidate; return a reference (commit sha or file path). Must be
        idempotent per (run_id, step, source): a resumed run may stage the same candidate
        again."""
        ...
