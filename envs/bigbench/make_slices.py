"""(Re)build the vendored BIG-bench slices and their split manifests.

    pip download --no-deps --no-binary :all: bigbench==1.0.0 -d /tmp/bb
    tar xzf /tmp/bb/bigbench-1.0.0.tar.gz -C /tmp/bb
    python -m envs.bigbench.make_slices --tasks-dir /tmp/bb/bigbench-1.0.0/bigbench/benchmark_tasks

For each task: the examples of its `task.json`, a seeded sample of at most SLICE of them
(ids keep the example's index in the source file, `<task>-<index>`), written to
`envs/bigbench/data/<task>.jsonl`; the sample's first TRAIN / VAL / TEST go to
`manifests/bigbench/<task>/{train,val,test}/items.json`. Deterministic: same files each run.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from core.atomic import write_json, write_text

TASKS = ("sports_understanding", "date_understanding", "object_counting")
SEED = 20261201
TRAIN, VAL, TEST = 120, 60, 120
SLICE = TRAIN + VAL + TEST
ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(__file__).resolve().parent / "data"
MANIFESTS = ROOT / "manifests" / "bigbench"


def slice_task(task_json: Path, task: str) -> list[dict]:
    examples = json.loads(task_json.read_text(encoding="utf-8"))["examples"]
    picked = random.Random(f"{SEED}:{task}").sample(range(len(examples)), min(SLICE, len(examples)))
    rows = []
    for index in picked:
        ex = examples[index]
        row = {"id": f"{task}-{index:04d}", "input": ex["input"]}
        if "target_scores" in ex:
            row["target_scores"] = ex["target_scores"]
        else:
            targets = ex["target"]
            row["target"] = targets if isinstance(targets, list) else [targets]
        rows.append(row)
    return rows


def write_task(tasks_dir: Path, task: str) -> dict[str, int]:
    rows = slice_task(tasks_dir / task / "task.json", task)
    write_text(
        DATA_DIR / f"{task}.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    )
    cuts = {"train": rows[:TRAIN], "val": rows[TRAIN : TRAIN + VAL], "test": rows[TRAIN + VAL :]}
    for split, part in cuts.items():
        write_json(MANIFESTS / task / split / "items.json", [{"id": r["id"]} for r in part])
    counts = {split: len(part) for split, part in cuts.items()}
    write_json(
        MANIFESTS / task / "split_manifest.json",
        {
            "benchmark": f"BIG-bench {task}",
            "source": f"bigbench==1.0.0 sdist, bigbench/benchmark_tasks/{task}/task.json",
            "licence": "Apache-2.0 (see envs/bigbench/NOTICE.md)",
            "seed": SEED,
            "method": "random.Random('<seed>:<task>').sample of the examples; first train, then val, then test",
            "counts": counts,
            "generator": "python -m envs.bigbench.make_slices",
        },
    )
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    for task in TASKS:
        print(task, write_task(args.tasks_dir, task))


if __name__ == "__main__":
    main()
