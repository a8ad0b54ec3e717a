"""The side-by-side configuration of issue 24, with and without early work.

SearchQA on the 12/8/8 anchor split (shared/data/searchqa_tiny); both roles on one
OpenAI-compatible llama.cpp server (the embedded SmolLM2-135M, 4 slots, 512-token cap,
greedy); 1 epoch, batch 12, minibatch 8, merge 8, edit budget 4, slow
update on 20 items, meta notes on, hard gate, the LLM optimizer.

The driver runs the training in child processes, alternating the code under test: `--old
DIR` is a checkout of the code before early work (e.g. a detached worktree of main), the
new code is this checkout. Each run starts the embedded server (`backend: local`, as
bench/searchqa_tiny.py; the server's Q/A template lets the tiny model answer, and an
empty answer is an answer); greedy decoding answers the target's short prompts alike across
runs and slots, so the run directories can be compared: steps (gate decisions, proposals,
candidates, rollouts), skill texts, summary scores. The optimizer's long prompts may not be
answered alike (the tokens, below), so its texts and what follows from them can differ.

Per run it prints the calls, wall time and slot occupancy of each phase (the ledger's
stage of each call: baseline, rollout, analyst, merge, gate, test, ...; a phase's wall is
from its first call's start to its last call's end; "busy" is the mean number of calls issued
and not yet answered over the phase's wall, a call waiting for its role's pool slot
included), "at_server" the same from the moment a call leaves our pools (above 4, the
server's own first-come queue orders the calls), "pool_wait_s" the seconds its calls waited
for a slot in our pools, and the tokens: read ("in_tok"), written ("out_tok", the variance
between runs: the optimizer's texts differ run to run, because a greedy reply of llama.cpp
depends on what the slot had cached — measured: one 1,500-token prompt sent twice alone
answered differently, and alike with `cache_prompt: false`), and evaluated by the server ("prefill_tok": the rest came from its slots'
prompt caches; "server_s": the server's own prompt and decode milliseconds). Then the
run's wall and wall/critical-path (as bench/searchqa_tiny.py: sequential rounds x the
median call). Not a test: nothing is asserted; the machine's load (`uptime`) is printed
before and after each run.

Run: .venv/bin/python bench/critical_path.py --old /path/to/old/checkout [--pairs 2]
     [--data ../shared/data/searchqa_tiny] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOTS = 4
SEED = "envs/searchqa/initial.md"  # both checkouts have it (bench/published_side_by_side.py:
# the published placeholder, envs/searchqa/seed.md, for both implementations)


def config_tree(data: Path, runs: Path, code: Path, seed: str = SEED) -> dict:
    """bench/searchqa_tiny.py's configuration, plus merge 8, slow update 20 and meta on."""
    role = {"backend": "local", "max_tokens": 512, "concurrency": SLOTS, "timeout_s": 600.0}
    return {
        "run": {"runs_dir": str(runs), "seed": 0},
        "env": {"name": "searchqa", "manifest_dir": str(data), "data_dir": str(data)},
        "models": {
            "target": role,
            "optimizer": role,  # no stop sequence (as published): multi-line JSON edits
            # 8192, not searchqa_tiny's 4096: step 0's slow-update prompt is ~4,130 tokens,
            # which a 4096-token slot refuses (in the old order and the new alike)
            # One thread: on 2 cores shared with other work, llama.cpp's threads wait for each
            # other at every step and decoding collapsed (measured at load 7.6: 128 tokens in
            # 113.5 s with 2 threads, 5.1 s with 1), which swamped any order's effect.
            # `threads` is the reply-writing threads; the new code reads prompts with all
            # cores (`batch_threads: null`), today's code with this one thread as well
            "local": {"parallel": SLOTS, "ctx_per_slot": 8192, "threads": 1},
        },
        "cache": {"enabled": False},  # every call reaches the server, in every run
        "train": {
            "initial_skill": str(code / seed),
            "strategy": "llm",
            "epochs": 1,
            "batch_size": 12,
            "minibatch_size": 8,
            "merge_batch_size": 8,
            "edit_budget": 4,
            "schedule": {"kind": "constant", "start": 4, "end": 4},
            "slow_update": {"sample_size": 20},
            "meta_skill": {"enabled": True},
            "gate": {"metric": "hard", "early_decide": True},
            "optimizer": {"max_completion_tokens": 512},
        },
    }


# ----------------------------------------------------------------------------- one run


async def one_run(data: Path, code: Path, run_dir: Path, seed: str = SEED) -> dict:
    """A training run with the code at `code` (already first on sys.path)."""
    from core.config import config_from_dict
    from core.models.factory import build_model_client
    from core.models.ledger import STAGE
    from core.run.directory import RunDirectory
    from core.run.events import EventBus
    from core.training.setup import choose_strategy
    from core.training.trainer import run_training
    from envs import get_environment

    config = config_from_dict(config_tree(data, run_dir.parent / "runs", code, seed))
    client = build_model_client(config)
    calls: list[dict] = []
    inner = client.complete

    async def recorded(messages, *, role, **settings):
        started = time.monotonic()
        completion = await inner(messages, role=role, **settings)
        calls.append(
            {
                "role": role,
                "stage": STAGE.get(),
                "start": started,
                "end": time.monotonic(),
                "in_tokens": completion.usage.input_tokens,
                "out_tokens": completion.usage.output_tokens,
            }
        )
        return completion

    client.complete = recorded
    keep_timings()
    sent: list[dict] = []  # the same calls from the moment they reach the server
    for role in ("target", "optimizer"):
        backend = client.runtime(role).backend
        backend.send = at_server(backend.send, role, sent, STAGE)
    env = get_environment(config.env)
    skill = (code / seed).read_text(encoding="utf-8")
    started = time.monotonic()
    failure = None
    try:
        summary = await run_training(
            config,
            run_dir=RunDirectory(run_dir),
            bus=EventBus(),
            client=client,
            env=env,
            strategy=choose_strategy(config, client),
            initial_skill=skill,
        )
        status = summary.status
    except Exception as exc:  # a benchmark reports how far it got
        failure, status = f"{type(exc).__name__}: {exc}", "failed"
    wall = time.monotonic() - started
    await client.aclose()
    for call in calls + sent:
        call["start"] -= started
        call["end"] -= started
    return {"status": status, "failure": failure, "wall_s": wall, "calls": calls, "sent": sent}


TIMINGS: dict[int, dict] = {}  # task -> llama.cpp's timings of the reply it just read


def keep_timings() -> None:
    """llama.cpp's reply says how many prompt tokens it evaluated (`prompt_n`) and how many
    it took from the slot's cache (`cache_n`): the prefill each call cost."""
    from core.models import openai_backend

    convert = openai_backend._to_completion

    def converted(response, request, latency):
        extra = getattr(response, "model_extra", None) or {}
        TIMINGS[id(asyncio.current_task())] = extra.get("timings") or {}
        return convert(response, request, latency)

    openai_backend._to_completion = converted


def at_server(send, role: str, sent: list[dict], stage):
    """`send` recording when a request leaves our pools for the server and when it returns."""

    async def timed(request, **kw):
        started = time.monotonic()
        completion = await send(request, **kw)
        timings = TIMINGS.pop(id(asyncio.current_task()), {})
        sent.append(
            {
                "role": role,
                "stage": stage.get(),
                "start": started,
                "end": time.monotonic(),
                "prompt_n": timings.get("prompt_n", 0),
                "cache_n": timings.get("cache_n", 0),
                "prompt_ms": timings.get("prompt_ms", 0.0),
                "predicted_ms": timings.get("predicted_ms", 0.0),
            }
        )
        return completion

    return timed


# ----------------------------------------------------------------------------- figures


def busy_over(calls: list[dict], start: float, end: float) -> float:
    """Mean calls in flight (all roles) over [start, end]."""
    if end <= start:
        return 0.0
    covered = sum(max(0.0, min(c["end"], end) - max(c["start"], start)) for c in calls)
    return covered / (end - start)


def phases(calls: list[dict], sent: list[dict]) -> list[dict]:
    """Per stage: calls, span, mean calls issued ("busy") and at the server ("at_server",
    above 4 the server's own queue orders them), the seconds its calls waited in our pools
    (issued minus at the server, summed) and the tokens read and written."""
    rows = []
    for stage in dict.fromkeys(c["stage"] for c in sorted(calls, key=lambda c: c["start"])):
        mine = [c for c in calls if c["stage"] == stage]
        mine_sent = [c for c in sent if c["stage"] == stage]
        start, end = min(c["start"] for c in mine), max(c["end"] for c in mine)
        issued = sum(c["end"] - c["start"] for c in mine)
        served = sum(c["end"] - c["start"] for c in mine_sent)
        rows.append(
            {
                "phase": stage,
                "calls": len(mine),
                "from_s": round(start, 1),
                "wall_s": round(end - start, 1),
                "busy": round(busy_over(calls, start, end), 1),
                "at_server": round(busy_over(sent, start, end), 1),
                "pool_wait_s": round(issued - served, 1),
                "in_tok": sum(c["in_tokens"] for c in mine),
                "out_tok": sum(c["out_tokens"] for c in mine),
                # prompt tokens the server evaluated (the rest came from its slot caches)
                "prefill_tok": sum(c.get("prompt_n", 0) for c in mine_sent),
                "server_s": round(
                    sum(c.get("prompt_ms", 0) + c.get("predicted_ms", 0) for c in mine_sent) / 1000,
                    1,
                ),
            }
        )
    return rows


def critical_path(calls: list[dict]) -> tuple[int, float]:
    """(sequential rounds, median call) as bench/searchqa_tiny.py counts them."""
    spans = sorted((c["start"], c["end"]) for c in calls)
    rounds, group, group_end = 0, 0, -1.0
    for start, end in spans:
        if start >= group_end and group:
            rounds += -(-group // SLOTS)
            group = 0
        group += 1
        group_end = max(group_end, end)
    rounds += -(-group // SLOTS) if group else 0
    median = statistics.median(c["end"] - c["start"] for c in calls) if calls else 0.0
    return rounds, median


TIMES = {"seconds", "latency_s", "started_at", "wall_time_s"}


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def digest(run_dir: Path) -> dict:
    """What must be equal between two orders: decisions, skills, scores, step files."""
    out: dict = {}
    summary = (
        json.loads((run_dir / "summary.json").read_text())
        if (run_dir / "summary.json").exists()
        else {}
    )
    out["scores"] = {
        k: summary.get(k) for k in ("baseline_val", "best_val", "final_val", "best_version")
    }
    out["test"] = {k: v.get("hard") for k, v in summary.get("test", {}).items()}
    out["accepted_steps"] = summary.get("accepted_steps")
    files = {}
    for path in sorted(run_dir.rglob("*")):
        name = str(path.relative_to(run_dir))
        if not path.is_file() or not (
            name.startswith(("steps/", "skills/")) or name == "best_skill.md"
        ):
            continue
        text = path.read_text(encoding="utf-8").replace(str(run_dir), "<run>")
        if path.suffix == ".json":
            text = json.dumps(untimed(json.loads(text)), sort_keys=True)
        elif path.suffix == ".jsonl":
            text = "\n".join(
                json.dumps(untimed(json.loads(line)), sort_keys=True) for line in text.splitlines()
            )
        files[name] = hashlib.sha256(text.encode()).hexdigest()[:12]
    out["files"] = files
    return out


# ----------------------------------------------------------------------------- driver


def child(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(args.code))
    result = asyncio.run(one_run(args.data, args.code, args.run_dir, args.seed))
    args.out.write_text(json.dumps(result))


def calls_by_role_and_stage(calls: list[dict]) -> dict[str, dict[str, int]]:
    """{"optimizer": {"analyst": 2, ...}, "target": {...}}: the ledger's stage of each call."""
    counted: dict[str, dict[str, int]] = {}
    for call in calls:
        stages = counted.setdefault(call["role"], {})
        stages[call["stage"]] = stages.get(call["stage"], 0) + 1
    return counted


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run_child(label: str, code: Path, data: Path, work: Path, n: int, seed: str = SEED) -> dict:
    run_dir, out = work / f"{label}-{n}", work / f"{label}-{n}.json"
    env = {**os.environ, "PYTHONPATH": str(code)}
    cmd = [sys.executable, __file__, "--child", "--code", str(code), "--seed", seed]
    cmd += ["--data", str(data), "--run-dir", str(run_dir), "--out", str(out)]
    load = os.getloadavg()[0]
    subprocess.run(cmd, check=True, env=env, cwd=code)
    result = json.loads(out.read_text())
    calls = result["calls"]
    rounds, median = critical_path(calls)
    figures = {
        "order": label,
        "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)],  # before, after
        "status": result["status"],
        "failure": result["failure"],
        "wall_s": round(result["wall_s"], 1),
        "calls": len(calls),
        "calls_by_role_and_stage": calls_by_role_and_stage(calls),
        "out_tokens": sum(c["out_tokens"] for c in calls),
        "phases": phases(calls, result["sent"]),
        "busy_overall": round(busy_over(calls, 0.0, result["wall_s"]), 2),
        "sequential_rounds": rounds,
        "median_call_s": round(median, 2),
        "wall_over_critical_path": round(result["wall_s"] / (rounds * median), 2)
        if rounds and median
        else None,
        "digest": digest(run_dir),
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="a checkout of the code before early work")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data" / "searchqa_tiny"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep run directories here")
    parser.add_argument(
        "--new-first",
        action="store_true",
        help="each pair runs the new code first (a second driver started beside one that "
        "runs today's first keeps an old and a new run side by side under the same load)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", default=SEED, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.old is None:
        parser.error("--old DIR (a checkout of the code before early work) is required")
    work = args.keep or Path(tempfile.mkdtemp(prefix="critical-path-"))
    work.mkdir(parents=True, exist_ok=True)
    print(json.dumps({"load_before": uptime()}))
    runs: list[dict] = []
    for n in range(args.pairs):
        order = [("today", args.old.resolve()), ("new", ROOT)]
        for label, code in reversed(order) if args.new_first else order:
            figures = run_child(label, code, args.data.resolve(), work, n)
            runs.append(figures)
            shown = {k: v for k, v in figures.items() if k != "digest"}
            print(json.dumps(shown), flush=True)
    print(json.dumps({"load_after": uptime()}))
    today = [r for r in runs if r["order"] == "today"]
    new = [r for r in runs if r["order"] == "new"]
    finished = all(r["status"] == "finished" for r in runs)
    same = finished and all(r["digest"] == today[0]["digest"] for r in runs)
    ratios = [round(n["wall_s"] / t["wall_s"], 2) for t, n in zip(today, new, strict=True)]
    print(
        json.dumps(
            {
                "today_wall_s": [r["wall_s"] for r in today],
                "new_wall_s": [r["wall_s"] for r in new],
                "new_over_today_pair_by_pair": ratios,
                "identical_decisions_and_files": same,
                "digest": today[0]["digest"] if same else [r["digest"] for r in runs],
                "run_dirs": str(work),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
