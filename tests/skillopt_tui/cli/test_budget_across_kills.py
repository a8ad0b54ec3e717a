"""Issue 9, money: `budget.max_cost_usd` holds across `kill -9`. The killed process's spend
is in spend.jsonl, so the rerun cannot spend it again; and per-stage usage reaches
summary.json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.skillopt_tui.cli.test_train_cmds import REPO, SKILLOPT, env_for, skillopt
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply
from tests.support.train_scenario import scenario_config

COST_PER_CALL = 0.01  # 1000 input tokens at $10 per million, output free
CAP = 0.12  # a whole run of the scenario serves more calls than this


class MeteredServer:
    """Answers every question with a fixed usage, counting what it served (what a provider
    bills); while `hang_at` is set, request number `hang_at` never gets an answer."""

    def __init__(self, hang_at: int | None) -> None:
        self.hang_at = hang_at
        self.served = 0
        self.lock = threading.Lock()

    def __call__(self, record):
        with self.lock:
            if self.hang_at is not None and record.index + 1 == self.hang_at:
                return Fault.hang()
            self.served += 1
        return Reply("Paris", input_tokens=1000, output_tokens=10)


def _config(tmp_path, base_url: str) -> str:
    tree = scenario_config(tmp_path)
    tree["models"]["target"] = {
        "backend": "openai",
        "base_url": base_url,
        "model": "metered",
        "concurrency": 1,
        "max_retries": 0,
    }
    tree["models"]["prices"] = {"metered": {"input_per_mtok": 10.0, "output_per_mtok": 0.0}}
    tree["budget"] = {"max_cost_usd": CAP}
    tree["cache"] = {"path": str(tmp_path / "cache" / "responses.sqlite")}
    path = tmp_path / "metered.yaml"
    path.write_text(yaml.safe_dump(tree))
    return str(path)


def _recorded_cost(out) -> float:
    ledger = json.loads((out / "state.json").read_text())["ledger"]
    return sum(row["cost_usd"] for row in ledger["per_role"].values())


@pytest.mark.parametrize("kill_after", [4, 9])
def test_the_cost_cap_holds_across_kill_9(tmp_path, kill_after):
    meter = MeteredServer(hang_at=kill_after + 1)
    with LoopbackOpenAI(handler=meter) as server:
        config = _config(tmp_path, server.base_url)
        out = tmp_path / "runs" / "metered"
        args = ["train", "--config", config, "--out", str(out)]
        child = subprocess.Popen(
            [str(SKILLOPT), *args],
            cwd=REPO,
            env=env_for(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while len(server.requests) <= kill_after:  # a condition, not a timing
                assert child.poll() is None, "the run ended before the kill"
                time.sleep(0.02)
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        assert meter.served == kill_after
        meter.hang_at = None
        rerun = skillopt(tmp_path, *args)
    assert rerun.returncode == 3, rerun.stderr  # stopped by the cap, resumable
    assert "cost budget reached" in rerun.stderr
    billed = meter.served * COST_PER_CALL
    assert billed <= CAP + COST_PER_CALL + 1e-9  # at most the one call in flight over
    assert _recorded_cost(out) == pytest.approx(billed)  # every served call is counted
    spend = [json.loads(line) for line in (out / "spend.jsonl").read_text().splitlines()]
    assert sum(e["cost_usd"] for e in spend) == pytest.approx(billed)


def test_per_stage_usage_reaches_the_summary(tmp_path):
    with LoopbackOpenAI(handler=MeteredServer(hang_at=None)) as server:
        tree = yaml.safe_load(Path(_config(tmp_path, server.base_url)).read_text())
        tree["budget"] = {"max_cost_usd": 100.0}
        (tmp_path / "big.yaml").write_text(yaml.safe_dump(tree))
        out = tmp_path / "runs" / "staged"
        done = skillopt(
            tmp_path, "train", "--config", str(tmp_path / "big.yaml"), "--out", str(out)
        )
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    stages = summary["usage"]["per_stage"]
    assert {"baseline", "rollout", "gate", "test"} <= set(stages)
    assert sum(s["calls"] for s in stages.values()) == summary["usage"]["calls"]
