"""Offline tasks on the embedded model: which one shows the clearest honest lift?

For each offline task (capitals via configs/demo.yaml, the three BIG-bench slices via
configs/bigbench/default.yaml, and three reasoning-gym datasets via
configs/reasoning_gym/default.yaml with the generator settings in REASONING_GYM, which
need the reasoning-gym extra) this runs a short `skillopt train` with the `fewshot`
strategy on the embedded SmolLM2-135M model, with a fresh run directory and the response
cache off (so every figure is a real model call), and prints: baseline and best val (hard),
test of the initial and the best skill, target calls, tokens and wall time. Two honesty
checks beside them: the test accuracy of always giving the most common train answer (a
lift below it is not learning the task), and how many distinct answers the best skill gave
on test (one means it found a constant answer). Not a test: nothing here asserts a number.

Run: .venv/bin/python bench/offline_tasks.py [--tasks capitals,sports_understanding,...]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKILLOPT = Path(sys.executable).parent / "skillopt"
# reasoning-gym dataset -> generator settings small enough for a 135M model to have a chance.
REASONING_GYM = {
    "chain_sum": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1},
    "family_relationships": {"min_family_size": 3, "max_family_size": 4},
    "needle_haystack": {"min_num_statements": 3, "max_num_statements": 4},
}
TASKS = (
    "capitals",
    "sports_understanding",
    "date_understanding",
    "object_counting",
    *REASONING_GYM,
)


def run_task(task: str, out_root: Path) -> dict:
    if task == "capitals":
        args = ["--config", str(ROOT / "configs/demo.yaml")]
    elif task in REASONING_GYM:
        args = [
            "--config",
            str(ROOT / "configs/reasoning_gym/default.yaml"),
            "--set",
            f"env.options.datasets=[{task}]",
            "--set",
            f"env.options.dataset_config={json.dumps({task: REASONING_GYM[task]})}",
        ]
    else:
        args = [
            "--config",
            str(ROOT / "configs/bigbench/default.yaml"),
            "--set",
            f"env.options.task={task}",
        ]
    out = out_root / task
    started = time.monotonic()
    proc = subprocess.run(
        [
            str(SKILLOPT),
            "train",
            *args,
            "--set",
            "cache.enabled=false",
            "--out",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{task}: skillopt train failed ({proc.returncode}): {proc.stderr[-800:]}")
    summary = json.loads(proc.stdout)
    majority, distinct = honesty_checks(task, out, summary)
    roles = summary["usage"].get("per_role", {})
    target = roles.get("target", {})
    return {
        "task": task,
        "baseline_val": summary["baseline_val"],
        "best_val": summary["best_val"],
        "test_initial": summary["test"].get("initial", {}).get("hard"),
        "test_best": summary["test"].get("best", {}).get("hard"),
        "test_n": summary["test"].get("best", {}).get("n"),
        "accepted_steps": summary["accepted_steps"],
        "target_calls": target.get("calls"),
        "tokens": (target.get("input_tokens", 0) or 0) + (target.get("output_tokens", 0) or 0),
        "majority_answer_test": majority,
        "distinct_best_test_answers": distinct,
        "wall_s": round(wall, 1),
        "engine_wall_s": round(summary["wall_time_s"], 1),
    }


def honesty_checks(task: str, run: Path, summary: dict) -> tuple[float, int]:
    """(test accuracy of the most common train answer, distinct answers of the best skill)."""
    sys.path.insert(0, str(ROOT))
    from core.config import load_config
    from core.training.split_limit import limited_split
    from envs import get_environment

    config = load_config(run / "config.yaml")
    env = get_environment(config.env)
    common = collections.Counter(i.answer for i in env.load_split("train")).most_common(1)[0][0]
    test = limited_split(
        env.load_split("test"), config.train.test_limit, seed=config.run.seed, split="test"
    )
    majority = sum(env.score(i, common).hard for i in test) / len(test)
    best_hash = summary["test"]["best"]["skill_hash"]
    answers = set()
    for line in (run / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if (
            event["type"] == "RolloutFinished"
            and event["phase"] == "test"
            and event["skill_hash"] == best_hash
        ):
            answers.add(event["prediction"].strip().lower())
    return round(majority, 2), len(answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in args.tasks.split(","):
            row = run_task(task, Path(tmp))
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print(
        f"{'task':<22} {'val base→best':<15} {'test init→best':<16} {'majority':>8} "
        f"{'answers':>7} {'calls':>6} {'tokens':>8} {'wall s':>7}"
    )
    for r in rows:
        val = f"{r['baseline_val']:.2f}→{r['best_val']:.2f}"
        test = f"{r['test_initial']:.2f}→{r['test_best']:.2f}"
        print(
            f"{r['task']:<22} {val:<15} {test:<16} {r['majority_answer_test']:>8} "
            f"{r['distinct_best_test_answers']:>7} {r['target_calls']:>6} {r['tokens']:>8} {r['wall_s']:>7}"
        )


if __name__ == "__main__":
    main()
