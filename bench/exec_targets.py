"""One officeqa item and one spreadsheetbench item through each real coding-agent CLI as
the exec target (figures printed, never asserted).

The model is the scripted brain of tests/support/benchmark_agent_brain.py on a loopback
server (it answers instantly: every second is the CLI's, its tools' and ours). Per CLI and
environment: wall time of the whole rollout (staging the files, the agent run in a fresh
workspace, scoring), model calls the agent made, tool calls it ran, tokens, the score —
confined to the workspace (what the environment does) and, for the sandbox's cost, the
same item unconfined.

    .venv/bin/python bench/exec_targets.py [--runs 3] [--agents claude_code,codex]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.models.agents.process import AGENTS_BIN  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from tests.envs.benchmarks.test_exec_targets import officeqa_env, sheets_env  # noqa: E402
from tests.support.agent_clis import MODEL, PROGRAM, PROTOCOL, SERVER  # noqa: E402
from tests.support.benchmark_agent_brain import OfficeQABrain, SpreadsheetBrain  # noqa: E402

ENVS = {
    "officeqa": (officeqa_env, OfficeQABrain),
    "spreadsheetbench": (sheets_env, SpreadsheetBrain),
}


def client_for(agent: str, server, tmp: Path):
    role = {
        "backend": agent,
        "base_url": server.base_url,
        "model": MODEL[agent],
        "binary": str(AGENTS_BIN / PROGRAM[agent]),
        "timeout_s": 120.0,
        "max_retries": 0,
    }
    config = config_from_dict({"models": {"target": role}, "cache": {"enabled": False}})
    return build_model_client(config, environ={})


async def one_item(agent: str, env_name: str, confined: bool, tmp: Path) -> dict:
    make_env, brain = ENVS[env_name]
    env = make_env(tmp, agent)
    item = env.load_split("val")[0]
    with SERVER[agent](brain(PROTOCOL[agent])) as server:
        client = client_for(agent, server, tmp)
        run_agent = client.bind_agent("target")

        async def target(task, skill_text):
            return await run_agent(replace(task, workspace_only=confined), skill_text)

        started = time.monotonic()
        result = await env.rollout(item, "# Skill\n\nRead the task twice.\n", target)
        wall = time.monotonic() - started
        await client.aclose()
        calls = len(server.model_requests)
    tools = sum(1 for m in result.trajectory if m["role"] == "tool_call")
    return {
        "wall": wall,
        "calls": calls,
        "tools": tools,
        "tokens": (result.input_tokens, result.output_tokens),
        "hard": result.hard,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agents", default="claude_code,codex")
    args = parser.parse_args()
    agents = args.agents.split(",")
    missing = [a for a in agents if not (AGENTS_BIN / PROGRAM[a]).exists()]
    if missing:
        raise SystemExit(f"not installed: {', '.join(missing)} (run `make agents`)")
    print(f"one item per CLI per environment, median of {args.runs} runs")
    print(f"{'agent':<12} {'env':<17} {'mode':<11} wall    calls tools tokens in/out  hard")
    for agent in agents:
        for env_name in ENVS:
            for confined in (True, False):
                rows = []
                for _ in range(args.runs):
                    with tempfile.TemporaryDirectory() as tmp:
                        rows.append(await one_item(agent, env_name, confined, Path(tmp)))
                wall = statistics.median(r["wall"] for r in rows)
                last = rows[-1]
                mode = "confined" if confined else "unconfined"
                tokens = f"{last['tokens'][0]}/{last['tokens'][1]}"
                print(
                    f"{agent:<12} {env_name:<17} {mode:<11} {wall:5.2f}s  {last['calls']:>5} "
                    f"{last['tools']:>5} {tokens:>13}  {last['hard']:.0f}"
                )


if __name__ == "__main__":
    asyncio.run(main())
