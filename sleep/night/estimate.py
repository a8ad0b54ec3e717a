"""The pre-night estimate `skillopt sleep dry-run` shows: per routed skill, the calls of
each role (target rollouts, one judge call per rollout, optimizer calls) and an upper
bound on tokens and cost from the config's price table. Nothing is called.

Only the tasks the night will replay count: one it skips (replay mode `skipped`: an
external or redacted request, or a workspace mode with no runner yet; sleep.night.replay_modes)
costs nothing, and the plan says how many are skipped and why (`skipped_counts`)."""

from __future__ import annotations

from core.models.factory import build_model_client
from core.models.ledger import estimate_cost
from core.run.estimate import NO_COST, QUESTION_TOKENS, cost_words, plan_calls
from sleep.night.replay_env import ReplayEnvironment
from sleep.night.replay_modes import replayable
from sleep.night.run import Night, NightPlan

JUDGE_PROMPT_TOKENS = 400  # the judge prompt around a task, its rubric and one reply


async def _never(*_args, **_kwargs):  # a dry run never calls the judge
    raise AssertionError("a dry run must not call a model")


def skipped_counts(tasks: list[dict]) -> dict[str, int]:
    """How many of a skill's planned tasks (`NightPlan.routes[...]["tasks"]`) tonight
    skips, by reason, most frequent first."""
    counts: dict[str, int] = {}
    for task in tasks:
        if task.get("skip_reason"):
            counts[task["skip_reason"]] = counts.get(task["skip_reason"], 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def skipped_line(counts: dict[str, int]) -> str:
    """'3 task(s) skipped tonight, not replayed or estimated: 2 <reason>; 1 <reason>'."""
    reasons = "; ".join(f"{n} {reason}" for reason, n in counts.items())
    return f"{sum(counts.values())} task(s) skipped tonight, not replayed or estimated: {reasons}"


async def estimate_night(night: Night, plan: NightPlan) -> dict[str, str]:
    out: dict[str, str] = {}
    sessions = night.sessions()
    backend = night.config.models.target.backend
    # a skill waiting for more held-out tasks (sleep/night/held_out.py) runs nothing
    waiting = {r["skill"]: r["waiting_for_val"] for r in plan.routes if r.get("waiting_for_val")}
    for route, planned in await night.routed_tasks(sessions):
        if route.skill in waiting:
            out[route.skill] = f"no calls: {waiting[route.skill]}"
            continue
        if not planned["train"] or not planned["val"]:
            continue
        splits = replayable(planned, backend, lambda _task, _reason: None)
        if not splits["train"] or not splits["val"]:
            out[route.skill] = (
                f"no calls: {len(splits['train'])} train / {len(splits['val'])} val tasks "
                "are left to replay once the skipped ones are out, and a night needs at "
                "least one of each to learn and gate"
            )
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
            runtimes = {r: client.runtime(r) for r in ("target", "optimizer", "judge")}
        finally:
            await client.aclose()
        # The embedded model, test doubles and handoff cost nothing (core.run.estimate).
        zero = {"input_per_mtok": 0.0, "output_per_mtok": 0.0}
        free = {rt.model: zero for rt in runtimes.values() if rt.kind in NO_COST}
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
            {r: rt.model for r, rt in runtimes.items()},
            {**config.models.prices, **free},
        )
        cost = cost_words(estimate, {r: rt.kind for r, rt in runtimes.items()})
        replayed = sum(map(len, splits.values()))
        left_out = sum(map(len, planned.values())) - replayed
        out[route.skill] = (
            f"estimate (upper bound): {calls.target_calls} target + {calls.target_calls} judge + "
            f"{calls.optimizer_calls} optimizer calls, {estimate.total_tokens:,} tokens, {cost}"
            + (f" (the {replayed} replayed tasks; {left_out} skipped)" if left_out else "")
        )
    return out
