"""What an agent run costs on `run.executor: ray` over local: the repo_tasks items (all
three splits) done one at a time by the real `codex` (or `claude`) from .tools/agents
against its scripted loopback brain (tests/support/repo_task_brain.py), locally and on a
one-worker loopback cluster (tests/support/ray_cluster.py), twice: the first pass pays the
job's start once. The difference per run is the Ray task, the files' tar there and the
outcome back. Figures are printed, never asserted.

    .venv/bin/python bench/ray_agent_overhead.py [--agent codex|claude_code]
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
from core.models.agents.process import AGENTS_BIN  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.training.evaluate import evaluate_skill  # noqa: E402
from envs import get_environment  # noqa: E402
from tests.support.agent_clis import MODEL, PROGRAM, PROTOCOL, SERVER  # noqa: E402
from tests.support.ray_cluster import AUTH, RayCluster  # noqa: E402
from tests.support.repo_task_brain import INITIAL_SKILL, RULE, RepoTaskBrain  # noqa: E402

SKILL = f"{INITIAL_SKILL}\n{RULE}\n"


async def all_splits(agent: str, base_url: str, tmp: Path, executor: str, address) -> tuple:
    """(wall seconds, runs, mean hard score) over train, val and test, one run at a time."""
    config = config_from_dict(
        {
            "run": {"runs_dir": str(tmp), "executor": executor, "ray": {"address": address}},
            "env": {"name": "repo_tasks"},
            "cache": {"enabled": False},
            "models": {
                "target": {
                    "backend": agent,
                    "base_url": base_url,
                    "model": MODEL[agent],
                    "binary": str(AGENTS_BIN / PROGRAM[agent]),
                    "concurrency": 1,
                    "max_retries": 0,
                }
            },
        }
    )
    env = get_environment(config.env, target_backend=agent)
    client = build_model_client(config, environ={})
    runs, hard, started = 0, 0.0, time.perf_counter()
    try:
        for split in ("train", "val", "test"):
            result = await evaluate_skill(config, SKILL, split, env=env, client=client)
            runs, hard = runs + result.n, hard + result.hard * result.n
    finally:
        await client.aclose()
    return time.perf_counter() - started, runs, hard / max(runs, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", default="codex", choices=sorted(PROTOCOL))
    args = parser.parse_args()
    os.environ.update(AUTH)  # the loopback cluster uses no token
    with (
        tempfile.TemporaryDirectory() as tmp_name,
        SERVER[args.agent](RepoTaskBrain(PROTOCOL[args.agent])) as server,
    ):
        tmp = Path(tmp_name)
        local = asyncio.run(all_splits(args.agent, server.base_url, tmp, "local", None))
        cluster = RayCluster.start(cpus=1)
        try:
            runs = [
                asyncio.run(all_splits(args.agent, server.base_url, tmp, "ray", cluster.address))
                for _ in range(2)  # the first pays the job's start (runtime_env, worker)
            ]
            first, on_ray = runs
        finally:
            import ray

            ray.shutdown()
            cluster.stop()
    for name, (wall, runs, hard) in (("local", local), ("ray", on_ray)):
        print(f"{name:5}: {runs} {args.agent} runs in {wall:.1f} s ({wall / runs:.2f} s/run), "
              f"mean hard {hard:.2f}")  # fmt: skip
    print(f"per-run overhead of ray: {(on_ray[0] - local[0]) / local[1]:.2f} s; the job's "
          f"start (runtime_env upload, worker): {first[0] - on_ray[0]:.1f} s once")  # fmt: skip


if __name__ == "__main__":
    main()
