"""Each variant of the published method on the embedded model (issue 15): baseline -> best
val and the calls spent, one `skillopt train` per configs/features overlay that the
deterministic fewshot strategy can run (llm-only variants need an optimizer model).

    .venv/bin/python bench/method_variants.py [--steps 2] [--val 10] [variant ...]

Every run gets its own response cache so its call counts are its own. Prints one line per
variant; nothing is asserted (speed and scores are measured here, never in tests).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKILLOPT = Path(sys.executable).parent / "skillopt"
FEWSHOT_VARIANTS = [
    "default",
    "no_gate",
    "no_buffer",
    "no_slow_update",
    "no_meta",
    "forced_slow_update",
    "soft_gate",
    "mixed_gate",
]


def run_variant(name: str, root: Path, steps: int, val: int) -> dict:
    config = root / f"{name}.yaml"
    bases = [str(REPO / "configs" / "demo.yaml")]
    if name != "default":
        bases.append(str(REPO / "configs" / "features" / f"{name}.yaml"))
    config.write_text("_base_: [" + ", ".join(bases) + "]\n")
    out = root / "runs" / name
    args = [
        str(SKILLOPT), "train", "--config", str(config), "--out", str(out), "--json",
        "--set", "train.epochs=2", "--set", f"train.steps_per_epoch={steps}",
        "--set", "train.batch_size=8", "--set", f"train.val_limit={val}",
        "--set", "train.final_test=false", "--set", f"cache.path={root / name}.sqlite",
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, cwd=REPO)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        return {"variant": name, "error": proc.stderr.strip().splitlines()[-1:], "wall_s": wall}
    summary = json.loads((out / "summary.json").read_text())
    return {
        "variant": name,
        "baseline_val": summary["baseline_val"],
        "best_val": summary["best_val"],
        "accepted_steps": summary["accepted_steps"],
        "calls": summary["usage"]["calls"],
        "wall_s": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("variants", nargs="*", default=FEWSHOT_VARIANTS)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--val", type=int, default=10)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ns.variants:
            print(json.dumps(run_variant(name, Path(tmp), ns.steps, ns.val)), flush=True)


if __name__ == "__main__":
    main()
