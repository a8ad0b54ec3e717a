"""Ours and the published skillopt 0.2.0 side by side on issue 38's configuration.

SearchQA on the 12/8/8 anchor split (shared/data/searchqa_tiny), both roles on ONE
embedded llama.cpp server (SmolLM2-135M, 4 slots, 8,192-token slots, one decode thread)
that this driver starts and both implementations call: ours attaches to it
(SKILLOPT_EMBEDDED_URL; bench/critical_path.py's run), published through its OpenAI-
compatible `qwen_chat` backend. 1 epoch, batch 12, minibatch 8, merge 8, edit budget 4
(constant), slow update on 20, meta notes on, hard gate, 512-token replies, the published
placeholder seed (envs/searchqa/seed.md) for both.

Prints for each run: its wall time, the machine's 1-minute load before and after, and its
calls by role and stage (ours: the ledger's stages; published: its token tracker's, whose
`rollout` stage is the target and every other stage the optimizer). The question it
answers: does our run make an optimizer call that published does not (issue 38)? Not a
test: nothing is asserted. Wall times on a loaded machine are not comparable run to run.

Each run goes through a loopback proxy (bench/matched_optimizer.py) that logs every request
body (`<run>.requests.jsonl`); the first target request of each engine is printed, and how
the model's replies ended. With --matched-optimizer the proxy answers every optimizer call
from one fixed reply set, in each engine's format, and passes target calls through: both
engines then face the same edits, so their optimizer calls by role compare directly.

Run: .venv/bin/python bench/published_side_by_side.py --published-source DIR [--runs 1]
     [--keep DIR] [--only ours|published] [--matched-optimizer]
     (`make oracle` first: the published package's dependencies in .tools/skillopt-0.2.0;
     DIR a checkout of microsoft/SkillOpt at tag v0.2.0, since the wheel lacks its prompts)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.critical_path import SLOTS, run_child  # noqa: E402
from bench.matched_optimizer import MatchedOptimizerProxy  # noqa: E402
from core.config import LocalModelConfig  # noqa: E402
from core.models.local_server import ATTACH_ENV, LOCAL_MODEL_NAME, LocalModelServer  # noqa: E402

PUBLISHED_PYTHON = ROOT / ".tools" / "skillopt-0.2.0" / "bin" / "python"
SEED = "envs/searchqa/seed.md"
SERVER = LocalModelConfig(parallel=SLOTS, ctx_per_slot=8192, threads=1)


def published_config(data: Path, seed: Path) -> dict:
    """The same run in the published config's keys (its configs are not in the wheel, so
    every key the run reads is given)."""
    return {
        "model": {
            "backend": "qwen_chat",
            "optimizer_backend": "qwen_chat",
            "target_backend": "qwen_chat",
            "optimizer": LOCAL_MODEL_NAME,
            "target": LOCAL_MODEL_NAME,
            "reasoning_effort": "",
        },
        "train": {
            "num_epochs": 1,
            "train_size": 0,
            "batch_size": 12,
            "accumulation": 1,
            "seed": 42,
        },
        "gradient": {
            "minibatch_size": 8,
            "merge_batch_size": 8,
            "analyst_workers": SLOTS,
            "max_analyst_rounds": 3,
            "failure_only": False,
        },
        "optimizer": {
            "learning_rate": 4,
            "min_learning_rate": 4,
            "lr_scheduler": "constant",
            "lr_control_mode": "fixed",
            "skill_update_mode": "patch",
            "use_slow_update": True,
            "slow_update_samples": 20,
            "slow_update_gate_with_selection": False,
            "longitudinal_pair_policy": "mixed",
            "use_meta_skill": True,
            "use_skill_aware_reflection": False,
        },
        "evaluation": {"use_gate": True, "sel_env_num": 0, "test_env_num": 0, "eval_test": True},
        "env": {
            "name": "searchqa",
            "skill_init": str(seed),
            "split_mode": "split_dir",
            "split_seed": 42,
            "split_dir": str(data),
            "exec_timeout": 600,
            "max_turns": 1,
            "max_completion_tokens": 512,
            "workers": SLOTS,
        },
    }


def run_published(data: Path, work: Path, url: str, n: int, source: Path) -> dict:
    out = work / f"published-{n}"
    config = work / f"published-{n}.yaml"
    config.write_text(json.dumps(published_config(data, ROOT / SEED)))  # JSON is YAML
    cmd = [str(PUBLISHED_PYTHON), "-m", "scripts.train", "--config", str(config)]
    cmd += ["--qwen_chat_base_url", url, "--qwen_chat_api_key", "none"]
    cmd += ["--qwen_chat_max_tokens", "512", "--qwen_chat_temperature", "0"]
    cmd += ["--qwen_chat_timeout_seconds", "600", "--out_root", str(out)]
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    env["PYTHONPATH"] = str(source)  # its prompts are not in the wheel: run the checkout
    load = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True)
    wall = time.monotonic() - started
    (work / f"published-{n}.log").write_text(done.stdout + done.stderr)
    summary_path = out / "summary.json"
    tokens = json.loads(summary_path.read_text())["token_summary"] if summary_path.exists() else {}
    by_role: dict[str, dict[str, int]] = {}
    for stage, entry in tokens.items():
        if stage != "_total":
            role = "target" if stage == "rollout" else "optimizer"
            by_role.setdefault(role, {})[stage] = entry["calls"]
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    return {
        "order": "published",
        "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "status": "finished" if done.returncode == 0 and tokens else f"exit {done.returncode}",
        "wall_s": round(wall, 1),
        "calls": tokens.get("_total", {}).get("calls"),
        "calls_by_role_and_stage": by_role,
        "scores": {
            "val": [summary.get(f"{k}_selection_hard") for k in ("baseline", "best", "final")],
            "test": [
                summary.get(k) for k in ("baseline_test_hard", "test_hard", "final_test_hard")
            ],
        },
    }


def ours_scores(run: dict) -> dict:
    """val initial/best/final and test initial/best/final from our run's summary."""
    scores, test = run["digest"]["scores"], run["digest"]["test"]
    return {
        "val": [scores.get(k) for k in ("baseline_val", "best_val", "final_val")],
        "test": test,
    }


def first_target_request(log: Path) -> dict | None:
    """The first target request the proxy logged, as sent (its messages shortened)."""
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry["role"] == "target":
            body = dict(entry["body"])
            body["messages"] = [
                {**m, "content": m["content"][:300] + (" …" if len(m["content"]) > 300 else "")}
                if isinstance(m.get("content"), str)
                else m
                for m in body.get("messages", [])
            ]
            return {
                "request": body,
                "finish_reason": entry.get("finish_reason"),
                "completion_tokens": entry.get("completion_tokens"),
            }
    return None


def reply_tokens(log: Path, target: bool) -> dict:
    """How the model's replies to the target (or to the optimizer) ended: their count, mean
    tokens and finish reasons (a matched optimizer call never reaches the model)."""
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    answered = [
        e for e in entries if (e["role"] == "target") == target and "completion_tokens" in e
    ]
    reasons: dict[str, int] = {}
    for entry in answered:
        reason = str(entry.get("finish_reason"))
        reasons[reason] = reasons.get(reason, 0) + 1
    tokens = [e["completion_tokens"] for e in answered]
    return {
        "replies": len(answered),
        "mean_tokens": round(sum(tokens) / len(tokens), 1) if tokens else None,
        "finish_reasons": reasons,
    }


def optimizer_calls(run: dict) -> int:
    return sum(run["calls_by_role_and_stage"].get("optimizer", {}).values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="pairs (ours, then published)")
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data" / "searchqa_tiny"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep run directories here")
    parser.add_argument("--only", choices=("ours", "published"), help="run one side only")
    parser.add_argument(
        "--matched-optimizer",
        action="store_true",
        help="answer every optimizer call of both engines from one fixed reply set "
        "(bench/matched_optimizer.py); target calls reach the model",
    )
    parser.add_argument(
        "--published-source",
        type=Path,
        required=True,
        help="a checkout of microsoft/SkillOpt at v0.2.0 (the wheel lacks its prompts); it "
        "runs with the oracle venv's packages",
    )
    args = parser.parse_args()
    if not PUBLISHED_PYTHON.exists():
        parser.error(f"{PUBLISHED_PYTHON} is missing: run `make oracle` first")
    if not (args.published_source / "skillopt" / "envs" / "searchqa" / "prompts").is_dir():
        parser.error(f"{args.published_source}: not a SkillOpt checkout with its prompts")
    work = args.keep or Path(tempfile.mkdtemp(prefix="published-side-by-side-"))
    work.mkdir(parents=True, exist_ok=True)
    data = args.data.resolve()
    server = LocalModelServer(SERVER)
    url = server.start()
    runs = []
    source = args.published_source.resolve()

    def through_proxy(label: str, n: int, run):
        """`run(url)` through the proxy in front of the server: it answers the optimizer
        calls with --matched-optimizer, else passes them on; it logs every request."""
        log = work / f"{label}-{n}.requests.jsonl"
        proxy = MatchedOptimizerProxy(url, log, matched=args.matched_optimizer)
        try:
            figures = run(proxy.start())
        finally:
            proxy.stop()
        figures["optimizer_requests"] = proxy.counts()
        figures["first_target_request"] = first_target_request(log)
        figures["target_replies"] = reply_tokens(log, target=True)
        figures["optimizer_replies_from_the_model"] = reply_tokens(log, target=False)
        return figures

    def ours_run(at: str, n: int) -> dict:
        os.environ[ATTACH_ENV] = at  # our child runs attach to this server
        ours = run_child("ours", ROOT, data, work, n, SEED)
        keys = ("order", "load_1min", "status", "wall_s", "calls", "calls_by_role_and_stage")
        return {**{k: ours[k] for k in keys}, "scores": ours_scores(ours)}

    try:
        for n in range(args.runs):
            if args.only != "published":
                runs.append(through_proxy("ours", n, lambda at, n=n: ours_run(at, n)))
                print(json.dumps(runs[-1]), flush=True)
            if args.only != "ours":
                published = through_proxy(
                    "published", n, lambda at, n=n: run_published(data, work, at, n, source)
                )
                runs.append(published)
                print(json.dumps(runs[-1]), flush=True)
    finally:
        server.stop()
    optimizer = [{run["order"]: optimizer_calls(run)} for run in runs]
    print(json.dumps({"optimizer_calls": optimizer, "run_dirs": str(work)}))


if __name__ == "__main__":
    main()
