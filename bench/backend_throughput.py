"""Throughput of the model layer (figures are printed, never asserted).

Part 1: N concurrent completions through ModelClient against the loopback OpenAI server
with a fixed artificial latency. Ideal wall time = N x latency / concurrency; the gap to it
is the client's overhead (SDK, retries wrapper, ledger, semaphore). Also: a second pass that
is all response-cache hits, and a zero-latency sequential pass for per-call overhead.

Part 2: generated tokens/s of the embedded model with 1 and 4 parallel slots.

    .venv/bin/python bench/backend_throughput.py [--n 64] [--latency 0.1] [--concurrency 8]
        [--skip-embedded] [--threads T] [--requests 8] [--max-tokens 64]
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
from core.models.factory import build_model_client  # noqa: E402
from tests.support.loopback_openai import LoopbackOpenAI  # noqa: E402

KEY_VAR = "BENCH_KEY"


def _loopback_client(base_url: str, concurrency: int, cache_dir: Path, cache: bool):
    config = config_from_dict(
        {
            "run": {"runs_dir": str(cache_dir)},
            "models": {
                "target": {
                    "backend": "openai",
                    "base_url": base_url,
                    "model": "bench",
                    "api_key_env": KEY_VAR,
                    "concurrency": concurrency,
                }
            },
            "cache": {"enabled": cache, "path": str(cache_dir / "cache.sqlite")},
        }
    )
    return build_model_client(config, environ={KEY_VAR: "bench-key"})


async def _fire(client, n: int, tag: str) -> float:
    started = time.perf_counter()
    await asyncio.gather(
        *(
            client.complete([{"role": "user", "content": f"{tag} {i}"}], role="target")
            for i in range(n)
        )
    )
    return time.perf_counter() - started


async def loopback(n: int, latency: float, concurrency: int) -> None:
    print(
        f"== loopback OpenAI server: N={n}, latency={latency * 1000:.0f} ms, concurrency={concurrency}"
    )
    with tempfile.TemporaryDirectory() as tmp, LoopbackOpenAI(latency_s=latency) as server:
        client = _loopback_client(server.base_url, concurrency, Path(tmp), cache=True)
        async with client:
            await client.complete([{"role": "user", "content": "warm-up"}], role="target", seed=1)
            wall = await _fire(client, n, "q")
            ideal = n * latency / concurrency
            print(
                f"  achieved      {n / wall:8.1f} calls/s   wall {wall:.3f} s   ideal {ideal:.3f} s"
            )
            print(f"  ratio ideal/achieved  {ideal / wall:.3f}")
            # Calls share one event loop: its per-call CPU serialises, so the gap to the
            # ideal divided by N is the loop's cost per call (client + loopback server CPU).
            print(f"  overhead per call (wall - ideal) / N  {(wall - ideal) / n * 1000:.2f} ms")
            print(f"  server max in flight  {server.max_in_flight}")
            hits_wall = await _fire(client, n, "q")
            print(
                f"  cache-hit pass  {n / hits_wall:8.1f} calls/s ({hits_wall / n * 1000:.2f} ms/call)"
            )
    with tempfile.TemporaryDirectory() as tmp, LoopbackOpenAI() as server:
        client = _loopback_client(server.base_url, 1, Path(tmp), cache=False)
        async with client:
            await client.complete([{"role": "user", "content": "warm-up"}], role="target")
            k = max(20, n // 2)
            started = time.perf_counter()
            for i in range(k):
                await client.complete([{"role": "user", "content": f"s {i}"}], role="target")
            per_call = (time.perf_counter() - started) / k
            print(
                f"  zero-latency sequential round trip  {per_call * 1000:.2f} ms/call (client + HTTP + server)"
            )


async def embedded(parallel: int, threads: int | None, requests: int, max_tokens: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = config_from_dict(
            {
                "run": {"runs_dir": tmp},
                "models": {
                    "target": {
                        "backend": "local",
                        "concurrency": max(requests, 1),
                        "max_tokens": max_tokens,
                    },
                    "local": {"parallel": parallel, "threads": threads},
                },
                "cache": {"enabled": False},
            }
        )
        client = build_model_client(config, environ={})
        async with client:
            started = time.perf_counter()
            await client.complete(
                [{"role": "user", "content": "Say hello."}], role="target", max_tokens=1
            )
            load = time.perf_counter() - started
            topics = [
                "the sea",
                "a robot",
                "winter",
                "a library",
                "the moon",
                "a garden",
                "trains",
                "bread",
            ]
            started = time.perf_counter()
            results = await asyncio.gather(
                *(
                    client.complete(
                        [
                            {
                                "role": "user",
                                "content": f"Write a long story about {topics[i % len(topics)]}.",
                            }
                        ],
                        role="target",
                        stop=None,  # generate the full max_tokens
                    )
                    for i in range(requests)
                )
            )
            wall = time.perf_counter() - started
        out_tokens = sum(r.usage.output_tokens for r in results)
        print(
            f"  parallel={parallel} threads={threads or os.cpu_count()}: {out_tokens} tokens in "
            f"{wall:.2f} s = {out_tokens / wall:6.1f} tokens/s  (start + first call {load:.2f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--skip-embedded", action="store_true")
    parser.add_argument(
        "--threads", type=int, default=None, help="llama.cpp threads (default: all cores)"
    )
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    asyncio.run(loopback(args.n, args.latency, args.concurrency))
    if not args.skip_embedded:
        print(
            f"== embedded SmolLM2-135M: {args.requests} concurrent requests x {args.max_tokens} tokens"
        )
        for parallel in (1, 4):
            asyncio.run(embedded(parallel, args.threads, args.requests, args.max_tokens))


if __name__ == "__main__":
    main()
