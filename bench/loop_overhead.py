"""Training-loop overhead: what the engine adds on top of the model calls.

Prints three figures (not a test; nothing here asserts a time):

1. Engine overhead per rollout, with a zero-latency scripted TEST DOUBLE target, over
   ≥1,000 capitals rollouts: the full path (model client + rollout runner + rollout cache
   in SQLite + events appended to events.jsonl) minus the bare environment calling the
   double directly.
2. Wall time of one training step (fewshot strategy) against a fixed-latency loopback
   OpenAI server (tests/support/loopback_openai.py) vs the critical-path lower bound:
   the step's sequential model rounds (ceil(calls / concurrency) per phase) × latency.
3. The early gate's saving over a whole run (zero-latency double): rollouts saved and
   target calls with early_decide on and off, and whether every decision is identical.

Run: .venv/bin/python bench/loop_overhead.py [--latency 0.2] [--batch 40] [--val 40]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.run.directory import RunDirectory  # noqa: E402
from core.run.events import EventBus, GateDecided, JsonlEventLog, RolloutFinished, StepFinished  # noqa: E402
from core.training.rollout_cache import RolloutCache  # noqa: E402
from core.training.rollout_runner import RolloutRunner  # noqa: E402
from core.training.trainer import run_training  # noqa: E402
from envs import get_environment  # noqa: E402
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget  # noqa: E402
from tests.support.loopback_openai import LoopbackOpenAI, Reply  # noqa: E402


def all_items(env):
    return [i for split in ("train", "val", "test") for i in env.load_split(split)]


def facts_skill(env, share: float = 0.5, seed: int = 0, rule: bool = False) -> str:
    """Fact lines (both directions) for a seeded share of the countries: the double then
    knows them, and answers tersely only once a format rule is added."""
    rows = {}
    for item in all_items(env):
        country = item.data["country"]
        if item.task_type == "country_to_capital":
            rows.setdefault(country, {})["capital"] = item.answer
    countries = sorted(rows)
    random.Random(seed).shuffle(countries)
    chosen = sorted(countries[: int(len(countries) * share)])
    lines = ["# Capitals", ""] + (["Answer with only the name.", ""] if rule else [])
    for c in chosen:
        lines.append(f"- {c}: {rows[c]['capital']}")
        lines.append(f"- {rows[c]['capital']}: {c}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- 1


async def overhead_per_rollout(n_skills: int = 3) -> None:
    base = {
        "env": {"name": "capitals"},
        "models": {"target": {"backend": "scripted", "concurrency": 4}},
        "cache": {"enabled": False},
    }
    config = config_from_dict(base)
    env = get_environment(config.env)
    items = all_items(env)
    skills = [
        f"# Skill {k}\n\nAnswer with only the name.\n- France: Paris\n" for k in range(n_skills)
    ]
    double = SkillSensitiveTarget()

    t0 = time.perf_counter()
    bare = 0
    for skill in skills:
        for item in items:
            await env.rollout(item, skill, double.complete)
            bare += 1
    bare_s = time.perf_counter() - t0

    client = build_model_client(config, scripted={"target": SkillSensitiveTarget()})
    with tempfile.TemporaryDirectory() as tmp:
        bus = EventBus()
        log = JsonlEventLog(Path(tmp) / "events.jsonl")
        bus.subscribe(log)
        cache = RolloutCache(
            Path(tmp) / "rollouts.sqlite",
            target_key=client.settings_key("target"),
            env_key=f"{env.name}:{env.version}",
        )
        runner = RolloutRunner(env, client.bind("target"), cache, bus.emit, concurrency=4)
        t0 = time.perf_counter()
        full = 0
        for skill in skills:
            full += len(await runner.run(items, skill, split="all", phase="bench", step=0))
        full_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for skill in skills:
            await runner.run(items, skill, split="all", phase="bench", step=0)
        cached_s = time.perf_counter() - t0
        log.close()
        cache.close()
    await client.aclose()
    per_bare = bare_s / bare * 1e3
    per_full = full_s / full * 1e3
    print(f"1. engine overhead per rollout ({full} rollouts, zero-latency scripted double):")
    print(f"   bare environment + double        {per_bare:7.3f} ms/rollout")
    print(f"   full engine path                 {per_full:7.3f} ms/rollout")
    print(f"   overhead                         {per_full - per_bare:7.3f} ms/rollout")
    print(f"   served from the rollout cache    {cached_s / full * 1e3:7.3f} ms/rollout")


# --------------------------------------------------------------------------- 2


async def step_vs_critical_path(latency: float, batch: int, val: int, concurrency: int) -> None:
    double = SkillSensitiveTarget()

    def handler(record):
        return Reply(double.reply(record.messages))

    with (
        LoopbackOpenAI(handler=handler, latency_s=latency) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        env_tree = {"name": "capitals"}
        probe = get_environment(config_from_dict({"env": env_tree}).env)
        skill = facts_skill(probe)
        tree = {
            "run": {"runs_dir": tmp},
            "env": env_tree,
            "models": {
                "target": {
                    "backend": "openai",
                    "base_url": server.base_url,
                    "model": "double",
                    "concurrency": concurrency,
                    "max_retries": 0,
                }
            },
            "cache": {"enabled": False},
            "train": {
                "strategy": "fewshot",
                "epochs": 1,
                "steps_per_epoch": 1,
                "batch_size": batch,
                "val_limit": val,
                "final_test": False,
                "schedule": {"kind": "constant", "start": 4, "end": 4},
            },
        }
        config = config_from_dict(tree)
        bus = EventBus()
        marks: dict[str, float] = {}
        counts = {"train": 0, "gate": 0, "baseline": 0}

        def watch(event):
            if isinstance(event, RolloutFinished):
                counts[event.phase] = counts.get(event.phase, 0) + 1
                if event.phase == "baseline" and counts["baseline"] == val:
                    marks["step_start"] = time.perf_counter()
            elif isinstance(event, StepFinished):
                marks["step_end"] = time.perf_counter()

        bus.subscribe(watch)
        client = build_model_client(config)
        await run_training(
            config,
            run_dir=RunDirectory(Path(tmp) / "run"),
            bus=bus,
            client=client,
            env=get_environment(config.env),
            initial_skill=skill,
        )
        # The same number of calls through the model client alone (no engine), `concurrency`
        # at a time: what the HTTP client and server cost on this machine.
        complete = client.bind("target")
        n_calls = counts["train"] + counts.get("gate", 0)
        messages = [{"role": "user", "content": "What is the capital of France?"}]
        sem = asyncio.Semaphore(concurrency)

        async def one():
            async with sem:
                await complete(messages)

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n_calls)))
        client_only = time.perf_counter() - t0
        await client.aclose()
    wall = marks["step_end"] - marks["step_start"]
    rounds = math.ceil(counts["train"] / concurrency) + math.ceil(
        counts.get("gate", 0) / concurrency
    )
    bound = rounds * latency
    print(
        f"2. one step against a loopback server with {latency * 1e3:.0f} ms latency, concurrency {concurrency}:"
    )
    print(
        f"   calls: {counts['train']} train + {counts.get('gate', 0)} gate -> {rounds} sequential rounds"
    )
    print(
        f"   step wall {wall:.3f} s vs critical-path lower bound {bound:.3f} s -> ratio {wall / bound:.3f}"
    )
    print(
        f"   the same {n_calls} calls through the model client alone: {client_only:.3f} s "
        f"-> ratio {client_only / bound:.3f} (engine share of the step: {wall - client_only:+.3f} s)"
    )


# --------------------------------------------------------------------------- 3


class RegressingStrategy:
    """A bench-only strategy whose candidates are much worse than the skill: it replaces
    the format rule with "answer in a sentence" (so the double's answers stop matching) and
    deletes one seeded fact line (so every step's candidate is a different skill)."""

    name = "regressing"

    async def propose(self, ctx):
        from core.optimizer.strategy import Proposal
        from core.skill.edits import Edit

        facts = sorted(line for line in ctx.skill_text.splitlines() if line.startswith("- "))
        edits = [
            Edit(
                op="replace",
                target="Answer with only the name.",
                content="Answer in a full sentence.",
            ),
            Edit(op="delete", target=random.Random(ctx.seed).choice(facts)),
        ]
        return Proposal(edits=edits[: ctx.budget], merged=edits)

    async def slow_update(self, ctx):
        return None

    async def meta_notes(self, ctx):
        return ""


async def early_gate_saving(strategy_name: str = "fewshot") -> None:
    results = {}
    for early in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            tree = {
                "run": {"runs_dir": tmp},
                "env": {"name": "capitals"},
                "models": {"target": {"backend": "scripted", "concurrency": 4}},
                "cache": {"enabled": False},
                "train": {
                    "strategy": "fewshot",
                    "epochs": 2,
                    "steps_per_epoch": 4,
                    "batch_size": 20,
                    "final_test": False,
                    "gate": {"early_decide": early},
                    "slow_update": {"sample_size": 10},
                },
            }
            config = config_from_dict(tree)
            target = SkillSensitiveTarget()
            client = build_model_client(config, scripted={"target": target})
            probe = get_environment(config.env)
            bus = EventBus()
            gates = []
            bus.subscribe(
                lambda e, g=gates: (
                    g.append((e.step, e.accepted)) if isinstance(e, GateDecided) else None
                )
            )
            strategy = RegressingStrategy() if strategy_name == "regressing" else None
            summary = await run_training(
                config,
                run_dir=RunDirectory(Path(tmp) / "run"),
                bus=bus,
                client=client,
                env=probe,
                initial_skill=facts_skill(probe, rule=strategy is not None),
                strategy=strategy,
            )
            await client.aclose()
            results[early] = (summary, target.calls, gates)
    (on, on_calls, on_gates), (off, off_calls, off_gates) = results[True], results[False]
    val_n = on.val.get("n", 0)
    print(
        f"3. early gate over a whole run, {strategy_name} strategy ({len(on_gates)} gate "
        f"decisions, {val_n} val items):"
    )
    print(f"   early_decide on : {on.rollouts_saved} val rollouts saved, {on_calls} target calls")
    print(f"   early_decide off: {off.rollouts_saved} val rollouts saved, {off_calls} target calls")
    print(
        f"   identical decisions: {on_gates == off_gates}; best val {on.best_val:.3f} vs {off.best_val:.3f}"
    )
    gate_calls_off = len(on_gates) * val_n
    if gate_calls_off:
        print(f"   saving: {on.rollouts_saved / gate_calls_off:.1%} of the gates' val rollouts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--val", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--repeat", type=int, default=3, help="repeats of figure 1 (noisy machines)"
    )
    args = parser.parse_args()
    for _ in range(args.repeat):
        asyncio.run(overhead_per_rollout())
    asyncio.run(step_vs_critical_path(args.latency, args.batch, args.val, args.concurrency))
    asyncio.run(early_gate_saving("fewshot"))
    asyncio.run(early_gate_saving("regressing"))


if __name__ == "__main__":
    main()
