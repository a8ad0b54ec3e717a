"""How well each selection method chooses, in worlds where the truth is known (issue 39).

    .venv/bin/python bench/selection_sim.py [--seeds 50] [--world null ...] [--method ...] [--json]

Each run is the real training loop (core.training.run_training) with the TEST DOUBLES of
tests/doubles/rule_world.py: a target whose per-item success depends on which rules the
skill holds (noise 0.1 per rollout), and a scripted optimizer appending one known rule
per candidate. Worlds differ in the rules the optimizer can propose:

    null   no rule helps (8 neutral, 8 harmful): every acceptance is the gate fooled
    mixed  4 helpful, 8 neutral, 4 harmful
    rich   8 helpful, 4 neutral, 4 harmful

Per world and method, over the seeds:
    false_accept_rate  accepted candidates whose true score (noise-free, over every item)
                       does not beat the incumbent's, per candidate judged
    test_gain          measured test score of the best minus the initial skill's
    curse_gap          the best's val score minus its test score (the winner's curse)
    calls              target calls per run

Nothing is asserted here (the tests in tests/core/training/test_selection.py do that).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.doubles.rule_world import RuleWorld  # noqa: E402
from tests.support.selection_runs import run_sync  # noqa: E402

SCRATCH = Path("/dev/shm")
WORLDS = {
    "null": {"helpful": 0, "neutral": 8, "harmful": 8},
    "mixed": {"helpful": 4, "neutral": 8, "harmful": 4},
    "rich": {"helpful": 8, "neutral": 4, "harmful": 4},
}
METHODS = {  # overlays, and train keys over them
    "published": ([], {}),
    "significance_gate": (["significance_gate"], {}),
    "pareto": (["pareto"], {}),
    "pareto+significance_gate": (["pareto", "significance_gate"], {}),
    "screen": (["screen"], {}),
    "significance_gate+rescore": (["significance_gate"], {"gate": {"rescore": 3}}),
}
DEFAULT_METHODS = list(METHODS)[:5]  # the table; the others on request


def measure(world_name: str, method: str, seeds: int) -> dict:
    judged = fooled = 0
    gains, gaps, calls = [], [], []
    for seed in range(seeds):
        world = RuleWorld(seed=seed, mix=WORLDS[world_name])
        # tmpfs where there is one: a run's atomic writes sync, which a disk makes slow.
        with tempfile.TemporaryDirectory(dir=SCRATCH if SCRATCH.is_dir() else None) as tmp:
            overlays, train = METHODS[method]
            run = run_sync(Path(tmp), world, overlays, **train)
        judged += len(run.decisions)
        fooled += sum(
            1
            for info, better in zip(run.decisions, run.truly_better, strict=True)
            if info.get("became_best") and not better
        )
        test = run.summary.test
        gains.append(test["best"]["hard"] - test["initial"]["hard"])
        gaps.append(run.summary.best_val - test["best"]["hard"])
        calls.append(run.calls)
    return {
        "world": world_name,
        "method": method,
        "seeds": seeds,
        "false_accept_rate": round(fooled / judged, 4) if judged else 0.0,
        "candidates_judged": judged,
        "test_gain": round(statistics.mean(gains), 4),
        "curse_gap": round(statistics.mean(gaps), 4),
        "calls": round(statistics.mean(calls), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--world", action="append", choices=sorted(WORLDS))
    parser.add_argument("--method", action="append", choices=list(METHODS))
    parser.add_argument("--json", action="store_true", help="one JSON row per world and method")
    args = parser.parse_args()
    if not args.json:
        print(
            f"{'world':6} {'method':26} {'false acc':>9} {'test gain':>9} {'curse':>7} {'calls':>7}"
        )
    for world in args.world or list(WORLDS):
        for method in args.method or DEFAULT_METHODS:
            row = measure(world, method, args.seeds)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(
                    f"{world:6} {method:26} {row['false_accept_rate']:9.3f} "
                    f"{row['test_gain']:+9.3f} {row['curse_gap']:+7.3f} {row['calls']:7.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
