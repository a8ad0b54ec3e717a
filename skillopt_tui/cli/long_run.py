"""How long a run about to start will take when it falls back to the embedded model.

A config written for an API model (backend `auto`) quietly runs on the embedded model when
no key is set; for a real benchmark that is hours of a demonstration model. The warning
names the planned calls and a duration from a measurement, so a person can stop it.
"""

from __future__ import annotations

from core.run.estimate import CallPlan, plan_calls

# CPU seconds per embedded-model call, by role, measured for configs/capitals.yaml on this
# 2-core machine (2026-12-06, one model thread; a call's CPU time is its wall time on one
# idle core): a target call (a question, up to 64 tokens out) 0.48 s over 40 calls; an
# analyst call (about 1,800 tokens in, 230 out) 7.6 s over 3. Busy cores take longer:
# at load 16 the same target calls took 2.7 s of wall time each.
TARGET_S_PER_CALL = 0.48
OPTIMIZER_S_PER_CALL = 7.6
# Below this, the run is a demonstration-sized one and the notice alone says enough.
WARN_ABOVE_S = 5 * 60


def planned_calls(cfg, env, *, uses_llm: bool) -> CallPlan:
    """The run's planned model calls (an upper bound), target and optimizer apart."""
    return plan_calls(
        cfg,
        train_items=len(env.load_split("train")),
        val_items=len(env.load_split("val")),
        test_items=len(env.load_split("test")) if cfg.train.final_test else 0,
        uses_llm=uses_llm,
    )


def embedded_seconds(plan: CallPlan) -> float:
    """The plan's duration on one idle core of the embedded model."""
    return plan.target_calls * TARGET_S_PER_CALL + plan.optimizer_calls * OPTIMIZER_S_PER_CALL


def embedded_warning(plan: CallPlan) -> str | None:
    """The warning for a plan run on the embedded model, None when it is short."""
    seconds = embedded_seconds(plan)
    if seconds <= WARN_ABOVE_S:
        return None
    calls = plan.target_calls + plan.optimizer_calls
    return (
        f"warning: this config fell back to the embedded model for {calls:,} planned calls "
        f"({plan.target_calls:,} target, {plan.optimizer_calls:,} optimizer): about "
        f"{round(seconds / 60)} minutes on an idle core, longer on busy ones. Stop it with "
        "Ctrl-C and set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real run, or use "
        "configs/demo.yaml for a short one."
    )
