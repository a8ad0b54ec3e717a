"""Sleep harvest: throughput (MB/s) and peak memory on a generated transcript corpus.

    .venv/bin/python bench/harvest.py [--big-mb 200] [--small-mb 320] [--small-files 3200]

Generates, in a temporary directory that is deleted afterwards, realistic Claude Code
sessions (prompts, assistant text, tool calls, multi-kilobyte tool results, some lines of
~1 MB, like a `cat` of a big file) and Codex rollouts, and harvests them in a fresh
process per scenario so each peak RSS is its own:

  one-big     one Claude session file of BIG_MB
  many-small  SMALL_FILES files totalling SMALL_MB (half Claude, half Codex)
  rerun       the many-small corpus again with its cursors (nothing new to read)

Memory must not grow with file size: compare one-big's peak RSS with many-small's.
Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = [
    "the",
    "a",
    "parser",
    "cache",
    "retry",
    "token",
    "build",
    "test",
    "fails",
    "because",
    "when",
    "user",
    "config",
    "path",
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def claude_session(rng: random.Random, path: Path, target: int, cwd: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    session = path.stem
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target:
            i += 1
            base = {"sessionId": session, "cwd": cwd, "gitBranch": "main", "version": "2.1.84",
                    "timestamp": "2026-03-26T14:02:10.018Z", "isSidechain": False}  # fmt: skip
            lines = [
                {**base, "type": "user", "uuid": f"{session}-u{i}", "entrypoint": "cli",
                 "message": {"role": "user", "content": _sentence(rng, 30)}},
                {**base, "type": "assistant", "uuid": f"{session}-a{i}",
                 "message": {"id": f"msg_{i}", "role": "assistant", "model": "m", "content": [
                     {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "cat big.log"}}]}},
                {**base, "type": "user", "uuid": f"{session}-r{i}", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i}",
                     "content": _sentence(rng, 1500 if i % 50 else 150_000)}]}},
                {**base, "type": "assistant", "uuid": f"{session}-b{i}",
                 "message": {"id": f"msg_{i}b", "role": "assistant", "model": "m",
                             "content": [{"type": "text", "text": _sentence(rng, 200)}]}},
            ]  # fmt: skip
            for line in lines:
                data = json.dumps(line) + "\n"
                fh.write(data)
                written += len(data)
    return written


def codex_rollout(rng: random.Random, path: Path, target: int, cwd: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    thread = path.stem[-36:]
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        meta = {"timestamp": "2026-06-10T16:20:31.204Z", "type": "session_meta",
                "payload": {"id": thread, "cwd": cwd, "originator": "codex-tui", "source": "cli",
                            "base_instructions": {"text": _sentence(rng, 3000)}}}  # fmt: skip
        fh.write(json.dumps(meta) + "\n")
        while written < target:
            prompt = _sentence(rng, 25)
            for kind, payload in (
                ("event_msg", {"type": "task_started"}),
                ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
                ("event_msg", {"type": "user_message", "message": prompt}),
                ("response_item", {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"make\"}", "call_id": "c"}),
                ("response_item", {"type": "function_call_output", "call_id": "c", "output": "Exit code: 0\nOutput:\n" + _sentence(rng, 2000)}),
                ("event_msg", {"type": "task_complete"}),
            ):  # fmt: skip
                data = (
                    json.dumps(
                        {"timestamp": "2026-06-10T16:20:43.214Z", "type": kind, "payload": payload}
                    )
                    + "\n"
                )
                fh.write(data)
                written += len(data)
    return written


def generate(root: Path, big_mb: int, small_mb: int, small_files: int) -> dict[str, int]:
    rng = random.Random(0)
    sizes = {}
    sizes["one-big"] = claude_session(
        rng,
        root / "big" / "claude" / "projects" / "-srv-app" / "big-session.jsonl",
        big_mb << 20,
        "/srv/app",
    )
    total, per = 0, (small_mb << 20) // small_files
    for n in range(small_files):
        if n % 2:
            path = root / "small" / "claude" / "projects" / f"-srv-p{n % 40}" / f"s-{n:05d}.jsonl"
            total += claude_session(rng, path, per, f"/srv/p{n % 40}")
        else:
            tid = f"019e0000-0000-7000-8000-{n:012d}"
            path = (
                root
                / "small"
                / "codex"
                / "sessions"
                / "2026"
                / "06"
                / f"{n % 28 + 1:02d}"
                / f"rollout-2026-06-10T18-20-31-{tid}.jsonl"
            )
            total += codex_rollout(rng, path, per, f"/srv/p{n % 40}")
    sizes["many-small"] = total
    return sizes


def run_one(corpus: Path, state: Path) -> None:
    """In the child: one harvest, then print figures as JSON."""
    from sleep.harvest.run import HarvestOptions, harvest

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    # home=corpus: the other agents' default homes (~/.pi, ~/.copilot, …) are looked for
    # in the corpus, never in the machine's own home.
    result = harvest(HarvestOptions(state_dir=state, claude_home=str(corpus / "claude"),
                                    codex_home=str(corpus / "codex"), include_automation=True,
                                    environ={"HOME": str(corpus)}, home=corpus))  # fmt: skip
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({
        "seconds": seconds, "bytes_read": result.bytes_read, "files_read": result.files_read,
        "files_unchanged": result.files_unchanged, "tasks": sum(len(s.tasks) for s in result.sessions),
        "skipped": len(result.skipped), "peak_rss_kb": peak, "baseline_rss_kb": baseline,
    }))  # fmt: skip


def measure(corpus: Path, state: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(corpus), str(state)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        run_one(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--big-mb", type=int, default=200)
    parser.add_argument("--small-mb", type=int, default=320)
    parser.add_argument("--small-files", type=int, default=3200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="harvest-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        sizes = generate(root, args.big_mb, args.small_mb, args.small_files)
        total = sum(sizes.values())
        print(f"corpus: {total / 1e6:.0f} MB generated in {time.perf_counter() - t0:.0f} s")
        for name, corpus, state in (
            ("one-big", root / "big", root / "state-big"),
            ("many-small", root / "small", root / "state-small"),
            ("rerun", root / "small", root / "state-small"),
        ):
            fig = measure(corpus, state)
            mb = fig["bytes_read"] / 1e6
            rate = mb / fig["seconds"] if fig["seconds"] else float("inf")
            print(
                f"{name:10s} {mb:7.0f} MB read in {fig['seconds']:6.1f} s = {rate:6.1f} MB/s; "
                f"files read {fig['files_read']}, unchanged {fig['files_unchanged']}; "
                f"tasks {fig['tasks']}; peak RSS {fig['peak_rss_kb'] / 1024:.0f} MiB "
                f"(interpreter+imports {fig['baseline_rss_kb'] / 1024:.0f} MiB)"
            )
        os.sync()


if __name__ == "__main__":
    main()
