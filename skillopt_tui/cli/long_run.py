"""How long a run about to start will take when it falls back to the embedded model.

A config written for an API model (backend `auto`) quietly runs on the embedded model when
no key is set; for a real benchmark that is hours of a demonstration model. The warning
names the planned calls and a duration from a measurement, so a person can stop it.
"""

from __future__ import annotations

from core.run.estimate import plan_calls

# Wall seconds per embedded-model call: `make demo` (400 planned calls, an upper bound)
# took 43-176 s of wall time on the 2-core CI machine (configs/demo.yaml); the slowest.
EMBEDDED_S_PER_CALL = 176 / 400
# Below this, the run is a demonstration-sized one and the notice alone says enough.
WARN_ABOVE_S = 5 * 60


def planned_calls(cfg, env, *, uses_llm: bool) -> int:
    """The run's planned model calls (target and optimizer; an upper bound)."""
    plan = plan_calls(
        cfg,
        train_items=len(env.load_split("train")),
        val_items=len(env.load_split("val")),
        test_items=len(env.load_split("test")) if cfg.train.final_test else 0,
        uses_llm=uses_llm,
    )
    return plan.target_calls + plan.optimizer_calls


def embedded_warning(calls: int) -> str | None:
    """The warning for `calls` planned calls on the embedded model, None when it is short."""
    seconds = calls * EMBEDDED_S_PER_CALL
    if seconds <= WARN_ABOVE_S:
        return None
    return (
        f"warning: this config fell back to the embedded model for {calls:,} planned calls, "
        f"about {round(seconds / 60)} minutes or more on 2 cores. Stop it with Ctrl-C and "
        "set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real run, or use configs/demo.yaml "
        "for a short one."
    )
