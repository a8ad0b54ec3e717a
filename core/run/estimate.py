"""A pre-run estimate of model calls, tokens and cost, shown before any money is spent.

It counts calls from the loop's shape (steps, batch, groups, gate, epochs, final test) and
prices them with the config's price table. Token counts are rough upper bounds: outputs
are taken at `max_tokens` and the gate at its full val split (the early gate and the
caches only ever lower the real figures). A coding-agent target (claude_code, codex) is
counted in runs and left out of tokens and cost: a run takes as many model turns, with
the agent's own prompts and tools, as the agent needs, which no loop shape predicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from core.config import Config
from core.environment.contract import needs_agent
from core.models.ledger import BATCH_PRICE_FACTOR, Estimate, estimate_cost
from core.words import counted

CHARS_PER_TOKEN = 4
QUESTION_TOKENS = 60  # a task's own text in the target prompt
ITEM_TOKENS = 300  # one rendered trajectory in an optimizer prompt
FREE_KINDS = ("local", "scripted", "handoff")
BATCH_KINDS = ("openai", "anthropic")  # backends with a batch API (core/models/batch_api.py)
# Backends that send nothing to a paid API, and how the estimate names them: the embedded
# model runs here and costs $0; a handoff call is a prompt file a person (or their own
# agent session) answers, which costs no API money (their own time or subscription aside).
NO_COST = {
    "local": "the embedded model (free)",
    "scripted": "a test double (free)",
    "handoff": "handoff (you answer the prompts)",
}


@dataclass(frozen=True)
class CallPlan:
    target_calls: int
    optimizer_calls: int
    total_steps: int
    target_is_agent: bool = False  # target_calls are agent runs, not priced
    # Of target_calls, those that can wait for a provider batch (run.batch): the baseline
    # val and the test of the initial, best and final skills.
    batchable_calls: int = 0


def step_calls(config: Config, *, train_items: int, val: int, uses_llm: bool) -> tuple[int, int]:
    """(target calls, optimizer calls) of one step: its rollouts and its candidate's gate
    over `val` items; the analysts, merges and rank call when the optimizer is an LLM."""
    t = config.train
    batch = min(t.batch_size, train_items) if train_items else 0
    target = batch * t.accumulation + val  # a step rolls out `accumulation` batches
    if not uses_llm:
        return target, 0
    groups = t.accumulation * (math.ceil(batch / t.minibatch_size) + 1)  # fail/success
    merges = math.ceil((groups - 1) / (t.merge_batch_size - 1)) if groups > 1 else 0
    return target, groups + merges + 1  # + one rank call


def plan_calls(
    config: Config, *, train_items: int, val_items: int, test_items: int, uses_llm: bool
) -> CallPlan:
    t = config.train
    val = min(val_items, t.val_limit or val_items)
    test = min(test_items, t.test_limit or test_items) if t.final_test else 0
    steps_per_epoch = t.steps_per_epoch or max(
        1, math.ceil(train_items / max(t.batch_size * t.accumulation, 1))
    )
    steps = t.epochs * steps_per_epoch
    later_epochs = t.epochs - 1

    step_target, step_optimizer = step_calls(
        config, train_items=train_items, val=val, uses_llm=uses_llm
    )
    target = val + steps * step_target + 3 * test + val  # baseline, steps, final
    # Pairs at every epoch end for the slow update (the last included; fewshot writes
    # none), else between epochs for the meta notes; a gated slow update adds a val pass.
    pairs = 2 * min(t.slow_update.sample_size, train_items)
    slow = t.slow_update.enabled and uses_llm
    ends = t.epochs if slow else (later_epochs if t.meta_skill.enabled else 0)
    target += ends * pairs + (t.epochs * val if slow and t.slow_update.gated else 0)

    optimizer = 0
    if uses_llm:
        optimizer = steps * step_optimizer
        optimizer += t.epochs * int(t.slow_update.enabled) + later_epochs * int(
            t.meta_skill.enabled
        )
    return CallPlan(
        target_calls=target,
        optimizer_calls=optimizer,
        total_steps=steps,
        batchable_calls=val + 3 * test,
    )


def estimate_run(
    config: Config,
    *,
    train_items: int,
    val_items: int,
    test_items: int,
    uses_llm: bool,
    models: dict[str, str],
    initial_skill_chars: int = 0,
    free_models: frozenset[str] = frozenset(),
    agent_target: bool = False,
) -> tuple[CallPlan, Estimate]:
    """`free_models`: models that cost nothing (the embedded model, test doubles);
    `agent_target`: the target runs a coding agent (counted in runs, not priced)."""
    plan = plan_calls(
        config,
        train_items=train_items,
        val_items=val_items,
        test_items=test_items,
        uses_llm=uses_llm,
    )
    if agent_target:
        plan = replace(plan, target_is_agent=True)
    calls = {"target": plan.target_calls, "optimizer": plan.optimizer_calls}
    return plan, price_calls(
        config, calls, models, initial_skill_chars, free_models, agent_target=agent_target
    )


def price_calls(
    config: Config,
    calls: dict[str, int],
    models: dict[str, str],
    initial_skill_chars: int,
    free_models: frozenset[str],
    *,
    agent_target: bool,
) -> Estimate:
    """`calls[role]` calls priced at the estimate's per-call tokens (an agent target's
    runs are left out: no loop shape predicts their turns)."""
    # The skill grows during a run; assume it ends halfway to its size budget.
    skill_tokens = (initial_skill_chars + config.train.max_skill_chars) // 2 // CHARS_PER_TOKEN
    per_call = {
        "target": (skill_tokens + QUESTION_TOKENS, config.models.target.max_tokens),
        "optimizer": (
            skill_tokens + config.train.minibatch_size * ITEM_TOKENS,
            config.models.optimizer.max_tokens,
        ),
    }
    rows = {
        role: (n, *per_call[role])
        for role, n in calls.items()
        if not (agent_target and role == "target")
    }
    prices = {m: {"input_per_mtok": 0.0, "output_per_mtok": 0.0} for m in free_models}
    return estimate_cost(rows, models, {**config.models.prices, **prices})


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def cost_words(estimate: Estimate, kinds: dict[str, str] | None = None) -> str:
    """The cost part of the estimate line. `kinds[role]` is the role's backend kind: a role
    that makes calls on a NO_COST backend is named as such ("$0" when every role is free,
    "no API cost" when one is on handoff) instead of leaving the reader to guess why the
    price is 0 or missing."""
    kinds = kinds or {}
    called = [role for role, row in estimate.per_role.items() if row.get("calls")]
    free: dict[str, list[str]] = {}
    for role in called:
        if kinds.get(role) in NO_COST:
            free.setdefault(kinds[role], []).append(role)
    named = ", ".join(f"{_and(roles)} on {NO_COST[kind]}" for kind, roles in free.items())
    if called and len(called) == sum(map(len, free.values())):
        return f"{'no API cost' if 'handoff' in free else '$0'}: {named}"
    if estimate.unpriced:
        cost = f"cost unknown (no price for {', '.join(estimate.unpriced)})"
    else:
        cost = f"${estimate.cost_usd:.2f}"
    return f"{cost}; no cost for {named}" if named else cost


def describe(plan: CallPlan, estimate: Estimate, kinds: dict[str, str] | None = None) -> str:
    """The one-line estimate; `kinds[role]` = the role's backend kind (see cost_words)."""
    cost = cost_words(estimate, kinds)
    target = f"{plan.target_calls} target {'agent runs' if plan.target_is_agent else 'calls'}"
    line = (
        f"estimate (upper bound): {counted(plan.total_steps, 'step')}, {target}, "
        f"{plan.optimizer_calls} optimizer calls, {estimate.total_tokens:,} tokens, {cost}"
    )
    if plan.target_is_agent:
        line += (
            "; agent runs are not in the tokens or cost (each takes the model turns the agent "
            "needs): cap them with budget.max_calls or budget.max_cost_usd"
        )
    return line


def batch_price_words(plan: CallPlan, estimate: Estimate, target_kind: str) -> str:
    """Both prices: the estimate's cost with every call interactive and with the calls
    that can wait at the batch price (run.batch); "" when the target has no batch API or
    the cost is unknown."""
    row = estimate.per_role.get("target") or {}
    calls = int(row.get("calls") or 0)
    if target_kind not in BATCH_KINDS or estimate.unpriced or plan.target_is_agent or not calls:
        return ""
    waiting = min(plan.batchable_calls, calls)
    saved = row["cost_usd"] * waiting / calls * (1 - BATCH_PRICE_FACTOR)
    return (
        f"; ${estimate.cost_usd - saved:.2f} with run.batch ({waiting} target calls that can "
        f"wait, the baseline val and the tests, at the batch price: "
        f"{BATCH_PRICE_FACTOR:.0%} of ${row['cost_usd'] * waiting / calls:.2f})"
    )


def estimate_for(config: Config, env, client, initial_skill: str, *, uses_llm: bool) -> str:
    """The one-line estimate for a run about to start with this environment and client."""
    roles = {role: client.runtime(role) for role in ("target", "optimizer")}
    plan, estimate = estimate_run(
        config,
        train_items=len(env.load_split("train")),
        val_items=len(env.load_split("val")),
        test_items=len(env.load_split("test")) if config.train.final_test else 0,
        uses_llm=uses_llm,
        models={role: rt.model for role, rt in roles.items()},
        initial_skill_chars=len(initial_skill),
        free_models=frozenset(rt.model for rt in roles.values() if rt.kind in FREE_KINDS),
        agent_target=needs_agent(env),
    )
    kinds = {role: rt.kind for role, rt in roles.items()}
    return describe(plan, estimate, kinds) + batch_price_words(plan, estimate, kinds["target"])
