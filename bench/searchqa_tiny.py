"""SearchQA on the 12/8/8 anchor split (shared/data/searchqa_tiny) with both roles on the
embedded SmolLM2-135M model: 4 slots, 512-token cap, 1 epoch, batch 12, minibatch 8, edit
budget 4, gate on, the LLM optimizer (so the optimizer role really calls the model).

Prints wall time, model calls and tokens by role, and the ratio of wall time to the
critical path. The critical path is the run's sequential model rounds × the median call
latency: calls are grouped into rounds as they happen (a new group starts when a call
starts after every call of the current group has ended), and a group of n calls needs
ceil(n / slots) rounds. A ratio near 1 means the engine keeps the slots busy; the excess
is engine overhead plus calls that could not overlap. Not a test: nothing is asserted.

Because the optimizer's calls are far longer than the target's, the median understates
them; `lower_bound_s` is a tighter floor: per group, the longer of its longest call and its
total call time spread over the slots.

Every call is also appended to `--calls-log` as it finishes, and a run that fails (e.g. an
optimizer call past its timeout on a saturated machine) still prints the figures so far.
`--keep-run DIR` keeps the run directory (events, steps) for a look afterwards.

Run: .venv/bin/python bench/searchqa_tiny.py [--data ../shared/data/searchqa_tiny]
     [--timeout 300] [--calls-log calls.jsonl] [--keep-run DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.run.directory import RunDirectory  # noqa: E402
from core.run.events import EventBus  # noqa: E402
from core.training.setup import choose_strategy  # noqa: E402
from core.training.trainer import run_training  # noqa: E402
from envs import get_environment  # noqa: E402

SLOTS = 4


def config_tree(data: Path, runs: Path, timeout_s: float) -> dict:
    role = {"backend": "local", "max_tokens": 512, "concurrency": SLOTS, "timeout_s": timeout_s}
    return {
        "run": {"runs_dir": str(runs), "seed": 0},
        "env": {"name": "searchqa", "manifest_dir": str(data), "data_dir": str(data)},
        "models": {
            "target": role,
            # Multi-line JSON edits: do not stop the optimizer at the first newline.
            "optimizer": {**role, "stop": []},
            "local": {"parallel": SLOTS, "ctx_per_slot": 4096},
        },
        "cache": {"enabled": False},
        "train": {
            "initial_skill": str(ROOT / "envs/searchqa/initial.md"),
            "strategy": "llm",
            "epochs": 1,
            "batch_size": 12,
            "minibatch_size": 8,
            "edit_budget": 4,
            "schedule": {"kind": "constant", "start": 4, "end": 4},
            "gate": {"metric": "hard", "early_decide": True},
            # The 512-token cap holds for every call: the optimizer's budgets are not sized
            # up from the prompt (they would be, to ~1,600 tokens, without this).
            "optimizer": {"max_completion_tokens": 512},
        },
    }


def call_groups(calls: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """Calls that overlap (directly or in a chain) form one group; groups run one after
    another."""
    groups: list[list[tuple[float, float]]] = []
    group_end = -math.inf
    for start, end in sorted(calls):
        if start >= group_end:
            groups.append([])
        group_end = max(group_end, end)
        groups[-1].append((start, end))
    return groups


def rounds_of(calls: list[tuple[float, float]], slots: int) -> int:
    """Sequential rounds: a group of n calls needs ceil(n / slots) of them."""
    return sum(math.ceil(len(group) / slots) for group in call_groups(calls))


def lower_bound_of(calls: list[tuple[float, float]], slots: int) -> float:
    total = 0.0
    for group in call_groups(calls):
        spans = [end - start for start, end in group]
        total += max(max(spans), sum(spans) / slots)
    return total


async def main_async(
    data: Path, timeout_s: float, calls_log: Path | None, keep_run: Path | None
) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        config = config_from_dict(config_tree(data, Path(tmp), timeout_s))
        client = build_model_client(config)
        log: list[dict] = []
        inner = client.complete

        async def recorded(messages, *, role, **settings):
            started = time.monotonic()
            completion = await inner(messages, role=role, **settings)
            call = {
                "role": role,
                "start": started,
                "end": time.monotonic(),
                "latency": completion.latency_s,
                "input_tokens": completion.usage.input_tokens,
                "output_tokens": completion.usage.output_tokens,
                "finish_reason": completion.finish_reason,
            }
            log.append(call)
            if calls_log is not None:
                with calls_log.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(call) + "\n")
            return completion

        client.complete = recorded  # every role's calls go through here (bind() included)
        env = get_environment(config.env)
        skill = (ROOT / "envs/searchqa/initial.md").read_text(encoding="utf-8")
        started = time.monotonic()
        summary, failure = None, None
        try:
            summary = await run_training(
                config,
                run_dir=RunDirectory(keep_run or Path(tmp) / "run"),
                bus=EventBus(),
                client=client,
                env=env,
                strategy=choose_strategy(config, client),
                initial_skill=skill,
            )
        except Exception as exc:  # a benchmark reports how far it got
            failure = f"{type(exc).__name__}: {exc}"
        wall = time.monotonic() - started
        snapshot = client.ledger.snapshot()
        await client.aclose()
    latencies = [c["latency"] for c in log]
    spans = [(c["start"], c["end"]) for c in log]
    rounds = rounds_of(spans, SLOTS)
    floor = lower_bound_of(spans, SLOTS) if spans else 0.0
    median = statistics.median(latencies) if latencies else 0.0
    return {
        "status": summary.status if summary else "failed",
        "failure": failure,
        "baseline_val": summary.baseline_val if summary else None,
        "best_val": summary.best_val if summary else None,
        "test": {k: v.get("hard") for k, v in summary.test.items()} if summary else {},
        "wall_s": round(wall, 1),
        "calls": {r: int(v["calls"]) for r, v in snapshot.per_role.items()},
        "tokens": {
            r: int(v["input_tokens"] + v["output_tokens"]) for r, v in snapshot.per_role.items()
        },
        "median_call_s": round(median, 2),
        "sequential_rounds": rounds,
        "critical_path_s": round(rounds * median, 1),
        "wall_over_critical_path": round(wall / (rounds * median), 2)
        if rounds and median
        else None,
        "median_call_s_by_role": {
            role: round(statistics.median(c["latency"] for c in log if c["role"] == role), 2)
            for role in sorted({c["role"] for c in log})
        },
        "lower_bound_s": round(floor, 1),
        "wall_over_lower_bound": round(wall / floor, 2) if floor else None,
        "accepted_steps": summary.accepted_steps if summary else [],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data" / "searchqa_tiny"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="per-call timeout, seconds")
    parser.add_argument("--calls-log", type=Path, default=None)
    parser.add_argument("--keep-run", type=Path, default=None, help="keep the run directory here")
    args = parser.parse_args()
    figures = asyncio.run(main_async(args.data, args.timeout, args.calls_log, args.keep_run))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
