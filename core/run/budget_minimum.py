"""Before a run starts: does its budget buy the run's minimum, the baseline and one
candidate? A run whose cap is spent by the baseline stops before it learns anything, and
the person finds out after paying for the baseline. The check prices both with the pre-run
estimate (core.run.estimate: calls from the loop's shape, tokens as upper bounds) and says
how many candidates the cap buys at that bound, and what cap buys one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.config import Config
from core.run.estimate import price_calls, step_calls


@dataclass(frozen=True)
class Minimum:
    """What the baseline and one candidate take, in each unit a budget can cap."""

    baseline: dict[str, float]  # calls, tokens, cost_usd
    candidate: dict[str, float]
    cost_known: bool  # every model called is priced


def run_minimum(
    config: Config,
    *,
    train_items: int,
    val_items: int,
    uses_llm: bool,
    models: dict[str, str],
    initial_skill_chars: int = 0,
    free_models: frozenset[str] = frozenset(),
    agent_target: bool = False,
) -> Minimum:
    val = min(val_items, config.train.val_limit or val_items)
    target, optimizer = step_calls(config, train_items=train_items, val=val, uses_llm=uses_llm)

    def units(calls: dict[str, int]) -> tuple[dict[str, float], bool]:
        est = price_calls(
            config, calls, models, initial_skill_chars, free_models, agent_target=agent_target
        )
        tokens = est.total_tokens if not agent_target else math.nan  # agent turns: unknown
        return {"calls": sum(calls.values()), "tokens": tokens, "cost_usd": est.cost_usd}, (
            not est.unpriced and not agent_target
        )

    baseline, known_b = units({"target": val})
    candidate, known_c = units({"target": target, "optimizer": optimizer})
    return Minimum(baseline=baseline, candidate=candidate, cost_known=known_b and known_c)


CAPS = (
    ("max_calls", "calls", "{:.0f} calls"),
    ("max_tokens", "tokens", "{:,.0f} tokens"),
    ("max_cost_usd", "cost_usd", "${:.2f}"),
)


def budget_warning(config: Config, minimum: Minimum) -> str | None:
    """One line when a cap cannot buy the baseline and one candidate, else None."""
    for key, unit, shown in CAPS:
        cap = getattr(config.budget, key)
        if cap is None:
            continue
        base, each = minimum.baseline[unit], minimum.candidate[unit]
        if math.isnan(base) or math.isnan(each) or (unit == "cost_usd" and not minimum.cost_known):
            continue
        if base + each <= cap or each <= 0:
            continue
        if cap < base:
            buys = "does not buy even the baseline"
        else:
            buys = f"buys the baseline and {math.floor((cap - base) / each)} candidates"
        return (
            f"warning: budget.{key} {shown.format(cap)} {buys} (baseline {shown.format(base)}, "
            f"each candidate {shown.format(each)}, at the estimate's upper bound); a run "
            f"needs the baseline and one candidate: set budget.{key} to at least "
            f"{shown.format(base + each)}"
        )
    return None


def budget_warning_for(
    config: Config, env, client, initial_skill: str, *, uses_llm: bool
) -> str | None:
    """budget_warning for a run about to start with this environment and client."""
    from core.environment.contract import needs_agent
    from core.run.estimate import FREE_KINDS

    roles = {role: client.runtime(role) for role in ("target", "optimizer")}
    minimum = run_minimum(
        config,
        train_items=len(env.load_split("train")),
        val_items=len(env.load_split("val")),
        uses_llm=uses_llm,
        models={role: rt.model for role, rt in roles.items()},
        initial_skill_chars=len(initial_skill),
        free_models=frozenset(rt.model for rt in roles.values() if rt.kind in FREE_KINDS),
        agent_target=needs_agent(env),
    )
    return budget_warning(config, minimum)
