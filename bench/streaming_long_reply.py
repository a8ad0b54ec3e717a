"""A long, slowly written reply against a whole-call timeout, streamed and unstreamed
(figures are printed, never asserted).

The loopback servers (tests/support/) write a reply of --chars characters in deltas of
--chunk-chars, one every --interval seconds: in all far longer than --timeout. Streamed,
`timeout_s` is the longest silence allowed, so the call should finish; unstreamed, the same
reply arrives whole after the same time and the call should time out. A stream that
stalls after a few deltas shows the failure stays bounded (about --timeout). No retries,
no cache: each row is one attempt.

    .venv/bin/python bench/streaming_long_reply.py [--chars 24000] [--chunk-chars 80]
        [--interval 0.02] [--timeout 2]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.models.types import ModelError  # noqa: E402
from tests.support.loopback_anthropic import LoopbackAnthropic  # noqa: E402
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply  # noqa: E402

KEY_VAR = "BENCH_KEY"
SERVERS = {"openai": LoopbackOpenAI, "anthropic": LoopbackAnthropic}


def _client(backend: str, base_url: str, stream: str, timeout: float, runs: Path):
    config = config_from_dict(
        {
            "run": {"runs_dir": str(runs)},
            "models": {
                "target": {
                    "backend": backend,
                    "base_url": base_url,
                    "model": "bench",
                    "api_key_env": KEY_VAR,
                    "timeout_s": timeout,
                    "max_retries": 0,
                    "max_tokens": 8192,
                    "stream": stream,
                }
            },
            "cache": {"enabled": False},
        }
    )
    return build_model_client(config, environ={KEY_VAR: "bench-key"})


async def _attempt(backend: str, server, stream: str, timeout: float, runs: Path) -> tuple:
    async with _client(backend, server.base_url, stream, timeout, runs) as client:
        await client.complete([{"role": "user", "content": "warm up"}], role="target")
        started = time.perf_counter()
        try:
            completion = await client.complete(
                [{"role": "user", "content": "write it all"}], role="target"
            )
            outcome = f"ok, {len(completion.text)} chars, finish={completion.finish_reason}"
        except ModelError as exc:
            why = str(exc).split(": gave up after 1 attempt: ", 1)[-1]
            outcome = "failed: " + why.split(" (", 1)[0]
        return time.perf_counter() - started, outcome


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=24_000)
    parser.add_argument("--chunk-chars", type=int, default=80)
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args()
    text = ("lorem ipsum dolor sit amet " * (args.chars // 27 + 1))[: args.chars]
    slow = Reply(text, chunk_chars=args.chunk_chars, chunk_interval_s=args.interval)
    deltas = len(slow.pieces())
    print(
        f"reply {args.chars} chars (~{args.chars // 4} tokens) in {deltas} deltas, one every "
        f"{args.interval:g}s (~{deltas * args.interval:.1f}s to write); timeout_s {args.timeout:g}"
    )
    print(f"{'protocol':<10} {'call':<22} {'wall s':>7}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for backend, server_class in SERVERS.items():
            cases = [
                ("streamed", "always", slow),
                ("unstreamed", "never", slow),
                ("streamed, stalls", "always", Fault.stream_stall(after=5, partial=slow)),
            ]
            for label, stream, answer in cases:
                with server_class() as server:
                    server.queue(Reply("warm"), answer)
                    wall, outcome = await _attempt(backend, server, stream, args.timeout, Path(tmp))
                print(f"{backend:<10} {label:<22} {wall:7.2f}  {outcome}")


if __name__ == "__main__":
    asyncio.run(main())
