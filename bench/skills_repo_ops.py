"""Skills repository: time to stage, diff and adopt on a branch with many staged commits.

    .venv/bin/python bench/skills_repo_ops.py [--commits 1000] [--lines 200]

One skill of LINES lines; COMMITS staged commits on one branch, each changing a few lines
(as a long training run would); then `diff` (net diff, numbered hunks, evidence of every
commit), `adopt` of a subset of hunks, and `adopt` of the rest after main moved (three-way
merge). Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.skills_repo import SkillsRepo  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lines = [f"- rule {i}: keep answers short and exact.\n" for i in range(args.lines)]

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        repo = SkillsRepo.init(Path(tmp) / "skills")
        repo.add_skill("bench", "".join(lines), deploy_to=str(Path(tmp) / "live" / "SKILL.md"))
        setup = time.perf_counter() - t0

        spots = list(range(2, args.lines, max(args.lines // 12, 8)))
        stage_times = []
        text = list(lines)
        for step in range(1, args.commits + 1):
            for _ in range(2):  # a run keeps refining a dozen places, so hunks stay apart
                text[rng.choice(spots)] = f"- rule edited at step {step}.\n"
            t = time.perf_counter()
            repo.stage(
                "bench",
                "bench-run",
                "".join(text),
                subject=f"step {step}",
                trailers={"Step": str(step), "Val-Before": "0.5", "Val-After": "0.6"},
                body="1. replace: sharper rule",
            )
            stage_times.append(time.perf_counter() - t)

        t = time.perf_counter()
        again = repo.stage(
            "bench", "bench-run", "x", subject="dup", trailers={"Step": str(args.commits)}
        )
        idempotent = time.perf_counter() - t
        assert again == repo.staged_branches()[0].head

        t = time.perf_counter()
        branches = repo.staged_branches()
        listing = time.perf_counter() - t

        t = time.perf_counter()
        diff = repo.diff("bench-run")
        diff_time = time.perf_counter() - t

        half = [h.index for h in diff.hunks[: len(diff.hunks) // 2]] or [1]
        t = time.perf_counter()
        repo.adopt("bench-run", half)
        adopt_subset = time.perf_counter() - t

        t = time.perf_counter()
        repo.adopt("bench-run")  # main moved since base: three-way merge of the rest
        adopt_rest = time.perf_counter() - t
        assert repo.read_skill("bench") == "".join(text)
        assert (Path(tmp) / "live" / "SKILL.md").read_text() == "".join(text)

        t = time.perf_counter()
        repo.rollback("bench")
        rollback = time.perf_counter() - t

    ms = 1000.0
    q = statistics.quantiles(stage_times, n=20)
    print(f"skills repo ops: {args.commits} staged commits, skill of {args.lines} lines")
    print(f"  init + add skill            {setup * ms:8.1f} ms")
    print(f"  stage, total                {sum(stage_times):8.2f} s")
    print(
        f"  stage, per commit           mean {statistics.mean(stage_times) * ms:.1f} ms, "
        f"p50 {statistics.median(stage_times) * ms:.1f} ms, p95 {q[18] * ms:.1f} ms, "
        f"first {stage_times[0] * ms:.1f} ms, last {stage_times[-1] * ms:.1f} ms"
    )
    print(f"  stage same step again       {idempotent * ms:8.1f} ms (idempotent, returns head)")
    print(f"  staged_branches()           {listing * ms:8.1f} ms ({branches[0].commits} commits)")
    print(
        f"  diff (net, {len(diff.hunks):3d} hunks, {len(diff.evidence)} commits of evidence) "
        f"{diff_time * ms:8.1f} ms"
    )
    print(f"  adopt {len(half)} hunks                {adopt_subset * ms:8.1f} ms")
    print(f"  adopt the rest (3-way)      {adopt_rest * ms:8.1f} ms")
    print(f"  rollback last adoption      {rollback * ms:8.1f} ms")


if __name__ == "__main__":
    main()
