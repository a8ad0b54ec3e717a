"""How every face names where a run is: the run directory's step numbers (steps/NNNN,
from 0) and the phases in words. The console, the Run screen's table, gate log, chart,
footer and trajectory view all use these, so "step 2" means steps/0002 everywhere.
"""

from __future__ import annotations

from core.run.events import RolloutFinished
from core.words import counted

PHASE_NAMES = {
    "baseline": "baseline",  # the initial skill on val, before step 0
    "train": "train",
    "gate": "gate",  # a candidate on val
    "slow_update": "slow update",
    "final_val": "final val",
    "test": "test",
    "eval": "eval",
}

# phases that belong to one step (their rollouts are under steps/NNNN); the others run
# before the first step or after the last one and have no step of their own
STEP_PHASES = frozenset({"train", "gate", "slow_update"})


def phase_label(phase: str, skill_role: str = "") -> str:
    """ "test (best)", "final val (final)", "gate"…: the phase, and which skill it scored
    when the phase scores several."""
    name = PHASE_NAMES.get(phase, phase)
    if skill_role and phase in {"test", "final_val"}:
        return f"{name} ({skill_role})"
    return name


def rollout_phase(r: RolloutFinished) -> str:
    return phase_label(r.phase, getattr(r, "skill_role", ""))


def rollout_step(r: RolloutFinished) -> int | None:
    """The step a rollout belongs to, or None for baseline, final val, test and eval."""
    return r.step if r.phase in STEP_PHASES and r.step >= 0 else None


def step_cell(r: RolloutFinished) -> str:
    step = rollout_step(r)
    return "—" if step is None else str(step)


def activity(r: RolloutFinished | None, baseline: tuple[int, int] = (0, 0)) -> str:
    """What a live run is doing, from its latest rollout: "step 2 gate", "test (best)",
    "baseline 3/30"."""
    if r is None:
        return ""
    done, total = baseline
    if r.phase == "baseline" and total:
        return f"baseline {min(done, total)}/{total}"
    step = rollout_step(r)
    name = rollout_phase(r)
    return name if step is None else f"step {step} {name}"


def steps_done(done: int, total: int) -> str:
    return f"{done}/{total} steps done" if total else f"{counted(done, 'step')} done"
