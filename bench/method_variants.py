"""Each variant of the published method (issue 15): baseline -> best val and the calls
spent, one `skillopt train` per configs/features overlay.

    .venv/bin/python bench/method_variants.py [--steps 2] [--val 10] [variant ...]
    .venv/bin/python bench/method_variants.py --llm [--target double|embedded] [variant ...]

A variant is an overlay name, or overlays joined by "+" for a combination
(`rewrite+autonomous_lr`).

Default: the embedded model with the deterministic fewshot strategy (the variants it can
run). `--llm`: the llm strategy against a loopback OpenAI-compatible server answering with
the scripted optimizer of bench/scripted_brain.py (every prompt path, including the
llm-only variants); the target is the skill-sensitive test double
(tests/doubles/skill_sensitive_target.py, fast and exact) or, with `--target embedded`,
the embedded model.

Every run gets its own response cache so its call counts are its own. Prints one line per
variant; nothing is asserted (speed and scores are measured here, never in tests).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
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
    "gated_slow_update",
    "soft_gate",
    "mixed_gate",
]


LLM_VARIANTS = [
    "default",
    "autonomous_lr",
    "rewrite",
    "full_rewrite",
    "rewrite+autonomous_lr",
    "skill_aware",
    "failures_only",
    "merge_edits_only",
    "sampled_pairs",
    "full_trajectory",
    "no_gate",
    "no_buffer",
    "no_slow_update",
    "no_meta",
    "gated_slow_update",
    "soft_gate",
    "mixed_gate",
    "density_gate",
    "repeated_gate",
]
KEY_ENV = "SKILLOPT_BENCH_OPTIMIZER_KEY"


def llm_base(root: Path, base_url: str, target: str) -> Path:
    """The config the --llm runs share: llm strategy, the loopback optimizer, the target."""
    target_cfg = (
        "{backend: local, max_tokens: 16}"
        if target == "embedded"
        else "{backend: scripted, model: 'tests.support.train_scenario:make_target'}"
    )
    env = ""
    if target != "embedded":
        # The double knows only what the skill states, so it is scored on the
        # hand-checkable scenario (tests/support/train_scenario.py), where val items can be
        # learnt from train (a format rule, a worked fact), not on unseen countries.
        from tests.support.train_scenario import INITIAL_SKILL, write_fixture

        data_dir, manifest_dir = write_fixture(root / "scenario")
        (root / "initial_skill.md").write_text(INITIAL_SKILL)
        env = f"env: {{name: capitals, data_dir: '{data_dir}', manifest_dir: '{manifest_dir}'}}\n"
    path = root / "llm_base.yaml"
    path.write_text(
        f"_base_: [{REPO / 'configs' / 'demo.yaml'}]\n"
        + env
        + (
            ""
            if target == "embedded"
            else f"train: {{initial_skill: '{root / 'initial_skill.md'}'}}\n"
        )
        + "models:\n"
        f"  target: {target_cfg}\n"
        f"  optimizer: {{backend: openai, model: scripted-brain, base_url: '{base_url}',"
        f" api_key_env: {KEY_ENV}}}\n"
    )
    return path


def run_variant(name: str, root: Path, steps: int, val: int, base: Path | None = None) -> dict:
    config = root / f"{name}.yaml"
    bases = [str(base or REPO / "configs" / "demo.yaml")]
    if name != "default":
        bases += [str(REPO / "configs" / "features" / f"{n}.yaml") for n in name.split("+")]
    config.write_text("_base_: [" + ", ".join(bases) + "]\n")
    out = root / "runs" / name
    args = [
        str(SKILLOPT), "train", "--config", str(config), "--out", str(out), "--json",
        "--set", "train.epochs=2", "--set", f"train.steps_per_epoch={steps}",
        "--set", "train.batch_size=8", "--set", f"train.val_limit={val}",
        "--set", f"train.strategy={'llm' if base else 'fewshot'}",
        "--set", "train.final_test=false", "--set", f"cache.path={root / name}.sqlite",
    ]  # fmt: skip
    started = time.monotonic()
    env = {**os.environ, KEY_ENV: "loopback-no-secret", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(args, capture_output=True, text=True, cwd=REPO, env=env)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        return {"variant": name, "error": proc.stderr.strip().splitlines()[-1:], "wall_s": wall}
    summary = json.loads((out / "summary.json").read_text())
    per_role = summary["usage"].get("per_role", {})
    return {
        "variant": name,
        "baseline_val": summary["baseline_val"],
        "best_val": summary["best_val"],
        "accepted_steps": summary["accepted_steps"],
        "calls": summary["usage"]["calls"],
        "optimizer_calls": int(per_role.get("optimizer", {}).get("calls", 0)),
        "target_calls": int(per_role.get("target", {}).get("calls", 0)),
        # calls by stage, every role (target: baseline, rollout, gate; optimizer: the rest)
        "calls_by_stage": {
            name: int(row.get("calls", 0))
            for name, row in sorted(summary["usage"].get("per_stage", {}).items())
            if row.get("calls")
        },
        "wall_s": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("variants", nargs="*")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--val", type=int, default=10)
    parser.add_argument("--llm", action="store_true", help="llm strategy, loopback optimizer")
    parser.add_argument("--target", choices=["double", "embedded"], default="double")
    ns = parser.parse_args()
    variants = ns.variants or (LLM_VARIANTS if ns.llm else FEWSHOT_VARIANTS)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        base = None
        if ns.llm:
            sys.path.insert(0, str(REPO))
            from bench.scripted_brain import answer
            from tests.support.loopback_openai import LoopbackOpenAI

            server = stack.enter_context(LoopbackOpenAI(lambda r: answer(r.last_user)))
            base = llm_base(Path(tmp), server.base_url, ns.target)
        for name in variants:
            row = run_variant(name, Path(tmp), ns.steps, ns.val, base)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
