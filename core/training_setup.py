"""Building what a training run needs from its config: the model client (with the
scripted TEST DOUBLE hook for subprocess tests), the environment, the optimizer strategy.

Kept apart from the loop so faces can build these up front (and fail on bad input before
a run directory is touched) and hand them to `run_training`.
"""

from __future__ import annotations

import time
from typing import Any

from core.config import Config
from core.events import BudgetUpdated, EventBus
from core.strategy import OptimizerStrategy
from envs.base import Environment

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
    )


def scripted_responders(config: Config) -> dict[str, Any]:
    """Roles configured as `backend: scripted` with `model: "package.module:callable"`: the
    callable is a factory returning the responder (a TEST DOUBLE hook, so subprocess tests
    can run `skillopt train` deterministically). Other scripted roles get nothing here."""
    import importlib

    from core.config import ROLES
    from core.errors import UserError

    out: dict[str, Any] = {}
    factories: dict[str, Any] = {}
    for role in ROLES:
        rc = config.models.role(role)
        if rc.backend != "scripted" or not rc.model or ":" not in rc.model:
            continue
        if rc.model not in factories:
            module_name, _, attr = rc.model.partition(":")
            try:
                factories[rc.model] = getattr(importlib.import_module(module_name), attr)()
            except (ImportError, AttributeError) as exc:
                raise UserError(
                    f"models.{role}.model {rc.model!r}: cannot load the scripted responder ({exc})"
                ) from None
        out[role] = factories[rc.model]
    return out


def build_client(config: Config, on_usage=None):
    from core.models.factory import build_model_client

    return build_model_client(
        config,
        scripted=scripted_responders(config) or None,
        on_usage=on_usage,
    )


def build_environment(config: Config) -> Environment:
    from envs import get_environment

    return get_environment(config.env)


def choose_strategy(config: Config, client) -> OptimizerStrategy:
    """`auto` = fewshot when the optimizer role resolves to the embedded local model (which
    cannot write sensible edits, EMBEDDED.md), else the LLM optimizer."""
    name = config.train.strategy
    if name == "auto":
        name = "fewshot" if client.is_local("optimizer") else "llm"
    if name == "fewshot":
        from core.fewshot import FewshotStrategy

        return FewshotStrategy()
    from core.llm_optimizer import LLMOptimizer

    return LLMOptimizer(client)


def build_client_with_budget_events(config: Config, bus: EventBus):
    """A client whose usage callback emits BudgetUpdated at most once a second."""
    holder: dict[str, Any] = {"client": None, "last": 0.0}

    def on_usage(*_args: Any, **_kwargs: Any) -> None:
        client = holder["client"]
        now = time.monotonic()
        if client is None or now - holder["last"] < BUDGET_THROTTLE_S:
            return
        holder["last"] = now
        bus.emit(budget_event(client.ledger.snapshot()))

    client = build_client(config, on_usage=on_usage)
    holder["client"] = client
    return client
