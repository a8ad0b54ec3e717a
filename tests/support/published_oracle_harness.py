"""Drives the published skillopt 0.2.0's pure functions for the differential tests.

Run with the oracle venv's python (`make oracle` builds .tools/skillopt-0.2.0/), never
imported by the product or by pytest: JSON lines on stdin, one request {"op": ..., ...}
a line, and for each one line on stdout, {"result": ...} or {"error": "..."}, so one
process serves a whole test session. Where a published function calls the optimizer model, the call is replaced by
a recorder that answers with the reply given in the request, so what is compared is the
function's own decision. Only the standard library and the published package are used.
"""

from __future__ import annotations

import json
import sys


def schedule(call: dict) -> list[int]:
    from skillopt.optimizer.scheduler import build_scheduler

    sched = build_scheduler(
        mode=call["mode"],
        max_lr=call["start"],
        min_lr=call["end"],
        total_steps=call["total_steps"],
    )
    return [sched.step() for _ in range(call["total_steps"])]


def apply_patch(call: dict) -> str:
    from skillopt.optimizer.skill import apply_patch as published_apply

    return published_apply(call["skill"], {"edits": call["edits"]})


def rank_select(call: dict) -> list[int]:
    """Indices (into the pool) of the edits the published rank-and-clip keeps, given the
    ranker's reply text (or no call at all when the pool fits the budget)."""
    import skillopt.optimizer.clip as clip
    from skillopt.optimizer.update_modes import payload_key

    mode = call.get("update_mode", "patch")  # "rewrite": the pool is revise suggestions
    edits = [dict(e, _index=i) for i, e in enumerate(call["edits"])]
    clip.chat_optimizer = lambda **_kw: (call["reply"], {})
    clip.format_meta_skill_context = lambda _ctx: ""
    clip.load_prompt = lambda _name: "system"
    pool = {payload_key(mode): edits}
    out = clip.rank_and_select("skill", pool, max_edits=call["budget"], update_mode=mode)
    return [e["_index"] for e in out[payload_key(mode)]]


def gate(call: dict) -> list[str]:
    """A run of candidates through the published gate: each row's action, state carried."""
    from skillopt.evaluation.gate import evaluate_gate

    current = best = call["initial"]
    best_step = 0
    actions = []
    for step, score in enumerate(call["candidates"], 1):
        res = evaluate_gate(f"skill-{step}", score, "cur", current, "best", best, best_step, step)
        current, best, best_step = res.current_score, res.best_score, res.best_step
        actions.append(res.action)
    return actions


def merge_shape(call: dict) -> list[list]:
    """The published merge tree's calls: [label, level, patches merged] per call, in order
    of level (within a level, in batch order)."""
    import skillopt.gradient.aggregate as agg

    calls: list[list] = []

    def fake_chat(*, system: str, user: str, **_kw):
        if system == "final":
            calls.append(["final", 0, 2])
        else:
            level = int(user.split("merge level ")[1].split(")")[0])
            count = int(user.split("## Patches to merge (")[1].split(" ")[0])
            calls.append([system, level, count])
        return json.dumps({"reasoning": "", "edits": [{"op": "append", "content": "x"}]}), {}

    agg.chat_optimizer = fake_chat
    agg.format_meta_skill_context = lambda _ctx: ""
    agg.load_prompt = lambda name: name.replace("merge_", "")

    def patches(n: int) -> list[dict]:
        return [{"edits": [{"op": "append", "content": f"e{i}"}]} for i in range(n)]

    agg.merge_patches(
        "skill",
        patches(call["failures"]),
        patches(call["successes"]),
        batch_size=call["batch_size"],
        verbose=False,
        workers=1,
    )
    return sorted(calls, key=lambda c: (c[0] == "final", c[0], c[1]))


def epoch_batches(call: dict) -> list[list[str]]:
    """The published split loader's train batches for one epoch (item ids per batch)."""
    from skillopt.datasets.base import SplitDataLoader

    loader = SplitDataLoader.__new__(SplitDataLoader)
    loader._splits = {"train": [{"id": i} for i in call["ids"]]}
    plan = loader.plan_train_epoch(
        epoch=call["epoch"],
        steps_per_epoch=call["steps_per_epoch"],
        accumulation=1,
        batch_size=call["batch_size"],
        seed=call["seed"],
    )
    return [[item["id"] for item in batch.payload] for batch in plan]


def pair_categories(call: dict) -> list[str]:
    from skillopt.optimizer.slow_update import build_comparison_pairs

    items = [{"id": str(i)} for i in range(len(call["prev"]))]
    prev = [{"id": str(i), "hard": h} for i, h in enumerate(call["prev"])]
    curr = [{"id": str(i), "hard": h} for i, h in enumerate(call["curr"])]
    return [p["category"] for p in build_comparison_pairs(prev, curr, items)]


def defaults(_call: dict) -> dict:
    """Defaults the wheel's own signatures carry (its configs are not in the wheel)."""
    import inspect

    from skillopt.gradient.aggregate import merge_patches

    return {"merge_batch_size": inspect.signature(merge_patches).parameters["batch_size"].default}


OPS = {
    "defaults": defaults,
    "schedule": schedule,
    "apply_patch": apply_patch,
    "rank_select": rank_select,
    "gate": gate,
    "merge_shape": merge_shape,
    "epoch_batches": epoch_batches,
    "pair_categories": pair_categories,
}


def main() -> None:
    for line in sys.stdin:
        call = json.loads(line)
        try:
            answer = {"result": OPS[call["op"]](call)}
        except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
