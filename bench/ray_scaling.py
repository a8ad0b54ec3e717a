"""Rollouts per second on `run.executor: ray` with 1, 2 and 4 Ray workers, and the
per-task overhead of Ray over local (figures are printed, never asserted).

Each rollout is the capitals environment's: one target call, to a loopback
OpenAI-compatible HTTP server (tests/support/loopback_openai.py, in this process) that
takes a fixed 200 ms per call. The runner has more slots than the cluster has workers, so
the workers bound the rollouts in flight: the ideal is workers / 0.2 s rollouts per second.
The response cache is off, so every rollout pays its call. Each cluster is a real
`ray start --head` on loopback with that many CPUs (tests/support/ray_cluster.py).

Overhead: the same rollouts one at a time against a 0 ms server, local vs ray; the
difference per rollout is what a Ray task plus its call's round trip through the broker
costs.

    .venv/bin/python bench/ray_scaling.py [--n 40] [--latency 0.2] [--workers 1 2 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.environment.contract import TaskItem  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.training.executor import LocalExecutor, open_executor  # noqa: E402
from core.training.rollout_cache import RolloutCache  # noqa: E402
from core.training.rollout_runner import RolloutRunner  # noqa: E402
from envs import get_environment  # noqa: E402
from tests.support.loopback_openai import LoopbackOpenAI, Reply  # noqa: E402
from tests.support.ray_cluster import AUTH, RayCluster, Shipped  # noqa: E402

KEY_VAR = "BENCH_KEY"
SKILL = "# Capitals\n\nAnswer with only the city name.\n"


def items(n: int) -> list[TaskItem]:
    return [
        TaskItem(
            id=f"i{k:03d}",
            task_type="country_to_capital",
            question=f"What is the capital of France? (item {k})",
            answer="Paris",
            data={"aliases": [], "country": "France"},
        )
        for k in range(n)
    ]


def config_for(tmp: Path, base_url: str, slots: int, executor: str, address: str | None):
    return config_from_dict(
        {
            "run": {"runs_dir": str(tmp), "executor": executor, "ray": {"address": address}},
            "cache": {"enabled": False},
            "models": {
                "target": {
                    "backend": "openai",
                    "base_url": base_url,
                    "model": "loopback-target",
                    "api_key_env": KEY_VAR,
                    "concurrency": slots,
                    "max_retries": 0,
                },
                "optimizer": {"backend": "scripted", "model": "unused"},
            },
        }
    )


async def rollouts(config, n: int) -> tuple[float, str]:
    """(wall seconds for n rollouts, where they ran)."""
    client = build_model_client(config, environ={KEY_VAR: "bench"})
    env = Shipped(get_environment(config.env))
    executor = (
        LocalExecutor(config.models.target.concurrency)
        if config.run.executor == "local"
        else open_executor(config, env, ledger=client.ledger)
    )
    try:
        cache = RolloutCache(None, target_key="bench", env_key="capitals")
        runner = RolloutRunner(
            env,
            client.bind("target"),
            cache,
            lambda _e: None,
            concurrency=config.models.target.concurrency,
            executor=executor,
        )
        await runner.run(items(2), SKILL, split="val", phase="warm", step=0)  # workers up
        cache = RolloutCache(None, target_key="bench2", env_key="capitals")
        runner.cache = cache
        started = time.perf_counter()
        results = await runner.run(items(n), SKILL, split="val", phase="eval", step=0)
        wall = time.perf_counter() - started
        assert all(r.hard == 1.0 for r in results), "the bench's answers must score"
        return wall, executor.describe()
    finally:
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--overhead-n", type=int, default=30)
    args = parser.parse_args()
    os.environ.update(AUTH)  # the loopback clusters use no token (tests/support/ray_cluster.py)
    slots = 2 * max(args.workers)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        with LoopbackOpenAI(handler=lambda r: Reply("Paris"), latency_s=args.latency) as slow:
            print(f"{args.n} rollouts, one {args.latency * 1000:.0f} ms call each, {slots} slots")
            wall, _ = asyncio.run(
                rollouts(config_for(tmp, slow.base_url, 1, "local", None), args.n)
            )
            print(f"  local, 1 slot : {args.n / wall:6.2f} rollouts/s ({wall:.2f} s)")
            config = config_for(tmp, slow.base_url, slots, "local", None)
            wall, _ = asyncio.run(rollouts(config, args.n))
            print(f"  local, {slots} slots: {args.n / wall:6.2f} rollouts/s ({wall:.2f} s)")
            for workers in args.workers:
                cluster = RayCluster.start(cpus=workers)
                try:
                    config = config_for(tmp, slow.base_url, slots, "ray", cluster.address)
                    wall, where = asyncio.run(rollouts(config, args.n))
                finally:
                    import ray

                    ray.shutdown()
                    cluster.stop()
                ideal = workers / args.latency
                print(
                    f"  ray, {workers} worker{'s' if workers > 1 else ' '}: "
                    f"{args.n / wall:6.2f} rollouts/s ({wall:.2f} s; ideal {ideal:.1f}/s) — {where}"
                )
        with LoopbackOpenAI(handler=lambda r: Reply("Paris")) as fast:
            n = args.overhead_n
            local, _ = asyncio.run(rollouts(config_for(tmp, fast.base_url, 1, "local", None), n))
            cluster = RayCluster.start(cpus=1)
            try:
                on_ray, _ = asyncio.run(
                    rollouts(config_for(tmp, fast.base_url, 1, "ray", cluster.address), n)
                )
            finally:
                import ray

                ray.shutdown()
                cluster.stop()
            print(
                f"per-rollout overhead of ray over local (0 ms server, one at a time, {n}): "
                f"local {local / n * 1000:.1f} ms, ray {on_ray / n * 1000:.1f} ms, "
                f"overhead {(on_ray - local) / n * 1000:.1f} ms"
            )


if __name__ == "__main__":
    main()
