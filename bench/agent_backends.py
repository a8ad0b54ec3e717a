"""Cost of driving the real coding-agent CLIs as backends (figures printed, never asserted).

Against zero-latency loopback servers (the model answers instantly, so every second is
the CLI's and ours):

0. the bare process start of each CLI (`--version`), for scale;
1. per-call overhead: one chat call through `ModelClient.complete` (cache off), process
   start to parsed result, sequentially — median and spread;
2. throughput: N chat calls at concurrency 1, 2 and 4 (calls/s);
3. one agent run (`run_agent`: fresh workspace, skill placed, a tool call that edits a file,
   diff, check) sequentially — median.

    .venv/bin/python bench/agent_backends.py [--calls 8] [--runs 4] [--agents claude_code,codex]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.models.agents.process import AGENTS_BIN  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.models.types import AgentTask  # noqa: E402
from tests.support.agent_clis import MODEL, PROGRAM, PROTOCOL, SERVER  # noqa: E402
from tests.support.repo_task_brain import RepoTaskBrain  # noqa: E402

MESSAGES = [{"role": "user", "content": "Say ok."}]
TASK_DIR = ROOT / "envs" / "repo_tasks" / "tasks" / "fix-mul"


def client_for(agent: str, server, concurrency: int, tmp: Path):
    config = config_from_dict(
        {
            "run": {"runs_dir": str(tmp)},
            "models": {
                "target": {
                    "backend": agent,
                    "base_url": server.base_url,
                    "model": MODEL[agent],
                    "binary": str(AGENTS_BIN / PROGRAM[agent]),
                    "concurrency": concurrency,
                    "timeout_s": 120.0,
                    "max_retries": 0,
                }
            },
            "cache": {"enabled": False},
        }
    )
    return build_model_client(config, environ={})


def bare_start(agent: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run(
            [str(AGENTS_BIN / PROGRAM[agent]), "--version"], capture_output=True, check=True
        )
        times.append(time.monotonic() - started)
    return times


async def per_call(agent: str, calls: int, tmp: Path) -> list[float]:
    with SERVER[agent](replies=[]) as server:
        client = client_for(agent, server, 1, tmp)
        times = []
        for _ in range(calls):
            started = time.monotonic()
            await client.complete(MESSAGES, role="target")
            times.append(time.monotonic() - started)
        await client.aclose()
    return times


async def throughput(agent: str, calls: int, concurrency: int, tmp: Path) -> float:
    with SERVER[agent](replies=[]) as server:
        client = client_for(agent, server, concurrency, tmp)
        started = time.monotonic()
        await asyncio.gather(*(client.complete(MESSAGES, role="target") for _ in range(calls)))
        elapsed = time.monotonic() - started
        await client.aclose()
    return calls / elapsed


async def agent_runs(agent: str, runs: int, tmp: Path) -> list[float]:
    import json

    row = json.loads((TASK_DIR / "task.json").read_text())
    task = AgentTask(
        prompt=row["prompt"],
        files=TASK_DIR / "repo",
        skill_name="repo-tasks",
        check=lambda ws: (ws / "calc.py").read_text(),
    )
    with SERVER[agent](RepoTaskBrain(PROTOCOL[agent])) as server:
        client = client_for(agent, server, 1, tmp)
        times = []
        for _ in range(runs):
            started = time.monotonic()
            outcome = await client.run_agent(task, "# Repo tasks\n", role="target")
            times.append(time.monotonic() - started)
            assert "a * b" in outcome.check
        await client.aclose()
    return times


def describe(times: list[float]) -> str:
    spread = f"min {min(times):.2f}s, max {max(times):.2f}s"
    return f"median {statistics.median(times):.2f}s ({spread}, n={len(times)})"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--agents", default="claude_code,codex")
    args = parser.parse_args()
    missing = [a for a in args.agents.split(",") if not (AGENTS_BIN / PROGRAM[a]).exists()]
    if missing:
        raise SystemExit(f"not installed: {', '.join(missing)} (run `make agents`)")
    with tempfile.TemporaryDirectory() as tmp:
        for agent in args.agents.split(","):
            print(f"== {agent}")
            print(f"  bare process start (--version): {describe(bare_start(agent, args.calls))}")
            print(f"  chat call overhead: {describe(await per_call(agent, args.calls, Path(tmp)))}")
            for concurrency in (1, 2, 4):
                rate = await throughput(agent, args.calls, concurrency, Path(tmp))
                print(f"  throughput at concurrency {concurrency}: {rate:.2f} calls/s")
            runs = await agent_runs(agent, args.runs, Path(tmp))
            print(f"  agent run (workspace, skill, 1 edit, diff, check): {describe(runs)}")


if __name__ == "__main__":
    asyncio.run(main())
