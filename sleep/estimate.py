"""The pre-night estimate `skillopt sleep dry-run` shows: per routed skill, the calls of
each role (target rollouts, one judge call per rollout, optimizer calls) and an upper
bound on tokens and cost from the config's price table. Nothing is called."""

from __future__ import annotations

from core.models.factory import build_model_client
from core.models.ledger import estimate_cost
from core.run.estimate import QUESTION_TOKENS, plan_calls
from sleep.night import Night, NightPlan
from sleep.replay_env import ReplayEnvironment

JUDGE_PROMPT_TOKENS = 400  # the judge prompt around a task, its rubric and one reply


async def _never(*_args, **_kwargs):  # a dry run never calls the judge
    raise AssertionError("a dry run must not call a model")


async def estimate_night(night: Night, plan: NightPlan) -> dict[str, str]:
    out: dict[str, str] = {}
    sessions = night.sessions()
    for route, splits in await night.routed_tasks(sessions):
        if not splits["train"] or not splits["val"]:
            continue
        config = night.run_config(len(splits["train"]), bool(splits["test"]))
        env = ReplayEnvironment(splits, _never)
        calls = plan_calls(
            config,
            train_items=len(env.load_split("train")),
            val_items=len(env.load_split("val")),
            test_items=len(env.load_split("test")),
            uses_llm=True,
        )
        client = build_model_client(config)
        try:
            models = {r: client.runtime(r).model for r in ("target", "optimizer", "judge")}
        finally:
            await client.aclose()
        skill_tokens = len(night.repo.read_skill(route.skill)) // 4
        reply = config.models.target.max_tokens
        estimate = estimate_cost(
            {
                "target": (calls.target_calls, skill_tokens + QUESTION_TOKENS, reply),
                "judge": (
                    calls.target_calls,
                    JUDGE_PROMPT_TOKENS + reply,
                    config.models.judge.max_tokens,
                ),
                "optimizer": (
                    calls.optimizer_calls,
                    skill_tokens + 8 * 300,
                    config.models.optimizer.max_tokens,
                ),
            },
            models,
            config.models.prices,
        )
        cost = (
            "cost unknown (no price for " + ", ".join(estimate.unpriced) + ")"
            if estimate.unpriced
            else f"${estimate.cost_usd:.2f}"
        )
        out[route.skill] = (
            f"estimate (upper bound): {calls.target_calls} target + {calls.target_calls} judge + "
            f"{calls.optimizer_calls} optimizer calls, {estimate.total_tokens:,} tokens, {cost}"
        )
    return out
