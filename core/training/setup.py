"""Building what a training run needs from its config: the model client (emitting
budget events) and the optimizer strategy. The environment is the caller's: the faces
build it (envs.get_environment) and hand it in, so core/ never imports an environment.

Kept apart from the loop so faces can build these up front (and fail on bad input before
a run directory is touched) and hand them to `run_training`.
"""

from __future__ import annotations

import time

from core.config import Config, ConfigError
from core.optimizer.strategy import OptimizerStrategy
from core.run.events import BudgetUpdated, EventBus, Notice

BUDGET_THROTTLE_S = 1.0


def budget_event(snap) -> BudgetUpdated:
    """A BudgetUpdated event from a LedgerSnapshot."""
    return BudgetUpdated(
        calls=snap.calls,
        cache_hits=snap.cache_hits,
        input_tokens=snap.input_tokens,
        output_tokens=snap.output_tokens,
        cost_usd=snap.cost_usd,
        cap_tokens=snap.cap_tokens,
        cap_cost_usd=snap.cap_cost_usd,
        per_role=snap.per_role,
        per_stage=snap.per_stage,
    )


def check_strategy_merges(config: Config, strategy: OptimizerStrategy) -> None:
    """train.pareto merges are the strategy's to write: one without `merge_skills` would
    leave the overlay's merges silently unused, so it is refused before any call."""
    pareto = config.train.pareto
    if pareto.enabled and pareto.merges and not callable(getattr(strategy, "merge_skills", None)):
        raise ConfigError(
            f"train.pareto.merges: {pareto.merges} needs a strategy that merges skills, and "
            f"the {strategy.name} strategy cannot: set train.pareto.merges 0 (the frontier "
            "without merges) or use the llm or fewshot strategy"
        )


def choose_strategy(config: Config, client) -> OptimizerStrategy:
    """`auto` = fewshot when the optimizer role resolves to the embedded local model (which
    cannot write sensible edits, EMBEDDED.md), else the LLM optimizer."""
    name = config.train.strategy
    if name == "auto":
        name = "fewshot" if client.is_local("optimizer") else "llm"
    if name == "fewshot":
        from core.config import ConfigError
        from core.optimizer.fewshot import FewshotStrategy

        method = config.train.optimizer
        for key, value, default in (
            ("lr_control", method.lr_control, "fixed"),
            ("update_mode", method.update_mode, "patch"),
            ("skill_aware", method.skill_aware, False),
        ):
            if value != default:
                raise ConfigError(
                    f"train.optimizer.{key}: {value} needs an optimizer model (the llm "
                    f"strategy); the fewshot strategy has no such variant — set "
                    f"train.strategy llm or {key} {str(default).lower()}"
                )

        return FewshotStrategy()
    from core.optimizer.llm import LLMOptimizer

    method = config.train.optimizer
    role = config.models.optimizer
    return LLMOptimizer(
        client,
        item_chars=method.trajectory_chars,
        # The embedded model's window is its slot, whatever the config says.
        context_tokens=(
            config.models.local.ctx_per_slot
            if client is not None and client.is_local("optimizer")
            else method.context_tokens
        ),
        max_tokens_floor=role.max_tokens,
        max_tokens_ceiling=method.max_completion_tokens,
        timeout_floor_s=role.timeout_s,
        failures_only=method.failures_only,
        merge_context=method.merge_context,
        merges=method.merges,
        dedupe_before_merge=method.dedupe_before_merge,
        update_mode=method.update_mode,
        skill_aware=method.skill_aware,
        notes_max_chars=method.notes_max_chars,
        retry_truncated=method.retry_truncated,
        pairs_per_outcome=config.train.slow_update.pairs_per_outcome,
        # Each run seed samples its own optimizer replies (published: no reply cache, every
        # call is fresh), so replicate runs never replay one another's from a shared cache.
        cache_scope=f"run-seed:{config.run.seed}",
    )


def unused_optimizer_notice(config: Config, client) -> str | None:
    """A warning when the config names an optimizer model that `train.strategy: fewshot`
    will never call (the fewshot strategy writes worked examples, no model reflects): a
    user who set models.optimizer to a strong model expects it to do the optimizing. Not
    for the embedded model (what fewshot is for: `auto` picks fewshot for it) and not when
    models.optimizer is left at its default. None when there is nothing to say."""
    role = config.models.optimizer
    if config.train.strategy != "fewshot" or (role.backend == "auto" and not role.model):
        return None
    if client.is_local("optimizer"):
        return None
    return (
        f"models.optimizer is set ({client.describe('optimizer')}) but train.strategy is "
        "fewshot, which never calls the optimizer: set train.strategy llm (or auto) to "
        "optimize with it, or leave models.optimizer out"
    )


# Backends that report each call's cost themselves (Claude Code's `total_cost_usd`).
SELF_PRICED_KINDS = frozenset({"claude_code"})


def roles_in_use(config: Config, client) -> list[str]:
    """The model roles a training run calls: the target, and the optimizer for `llm`."""
    return ["target"] + (["optimizer"] if choose_strategy(config, client).name == "llm" else [])


def check_cost_cap_is_priced(config: Config, client) -> None:
    """A cost cap over a model with no price could never fire (it would count $0): refuse
    to start it. The embedded model and the scripted test double are priced at 0."""
    if config.budget.max_cost_usd is None:
        return
    for role in roles_in_use(config, client):
        rt = client.runtime(role)
        if rt.kind in SELF_PRICED_KINDS:
            continue
        model = rt.model
        if model not in client.ledger.prices:
            raise ConfigError(
                f"budget.max_cost_usd is set but models.{role} uses {model!r}, which has no "
                f"price: add models.prices.{model}: {{input_per_mtok: ..., output_per_mtok: "
                "...}} (USD per million tokens), or cap tokens with budget.max_tokens"
            )


def build_client_with_budget_events(config: Config, bus: EventBus):
    """A client whose usage callback emits BudgetUpdated at most once a second, and whose
    mid-run notices (an unusable response cache) become Notice events."""
    from core.models.factory import build_model_client

    last = [0.0]

    def on_usage(snap) -> None:
        now = time.monotonic()
        if now - last[0] >= BUDGET_THROTTLE_S:
            last[0] = now
            bus.emit(budget_event(snap))

    def on_notice(text: str) -> None:
        bus.emit(Notice(text=text))

    return build_model_client(config, on_usage=on_usage, on_notice=on_notice)
