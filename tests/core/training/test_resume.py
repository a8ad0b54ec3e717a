"""Resume after `kill -9`: the same `skillopt train` command, run again, ends with the same
summary scores and the same best_skill.md bytes as an uninterrupted run, and makes no
target call that the killed process had already made.

The target is the skill-sensitive TEST DOUBLE behind the scripted backend, loaded by the
CLI from `tests.support.train_scenario:make_target`; it logs every answered call and can be
told to block forever at its N-th call (before answering or logging it), which is where
the test kills the process: a known point, with a step's state already on disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.train_scenario import write_config

REPO = Path(__file__).resolve().parents[3]
SKILLOPT = Path(sys.executable).parent / "skillopt"
SCORE_KEYS = (
    "baseline_val",
    "best_val",
    "final_val",
    "test",
    "val",
    "accepted_steps",
    "best_version",
    "steps_done",
    "total_steps",
)


def env_for(log: Path, hang_at: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env["SKILLOPT_TEST_CALL_LOG"] = str(log)
    env.pop("SKILLOPT_TEST_HANG_AT_CALL", None)
    if hang_at:
        env["SKILLOPT_TEST_HANG_AT_CALL"] = str(hang_at)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    return env


def train_cmd(config: Path, out: Path) -> list[str]:
    return [str(SKILLOPT), "train", "--config", str(config), "--out", str(out), "--json"]


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted run of the scenario."""
    root = tmp_path_factory.mktemp("uninterrupted")
    config = write_config(root)
    log = root / "calls.jsonl"
    done = subprocess.run(
        train_cmd(config, root / "run"),
        cwd=REPO,
        env=env_for(log),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((root / "run" / "summary.json").read_text())
    return {
        "summary": summary,
        "best": (root / "run" / "best_skill.md").read_bytes(),
        "calls": calls(log),
    }


# Call numbers in the uninterrupted run: 1-5 baseline (val), 6-8 step 0 train,
# 9-13 step 0 gate, 14-16 step 1 train, 17-18 step 1 gate (rejected early).
@pytest.mark.parametrize("hang_at", [3, 10, 18])
def test_kill_and_rerun_equals_an_uninterrupted_run(tmp_path, reference, hang_at):
    config = write_config(tmp_path)
    out = tmp_path / "run"
    log = tmp_path / "calls.jsonl"
    marker = Path(str(log) + ".hanging")
    proc = subprocess.Popen(
        train_cmd(config, out),
        cwd=REPO,
        env=env_for(log, hang_at),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, "the run ended before reaching the kill point"
            assert time.monotonic() < deadline, "the run never reached the kill point"
            time.sleep(0.05)
        state = json.loads((out / "state.json").read_text())
        expected_next = 0 if hang_at <= 13 else 1
        assert state["next_step"] == expected_next
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert calls(log) == hang_at - 1
    assert (out / ".owner.pid").exists()  # the dead process's lock: taken over below

    again = subprocess.run(
        train_cmd(config, out),
        cwd=REPO,
        env=env_for(log),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert "resuming at step" in again.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert {k: summary[k] for k in SCORE_KEYS} == {k: reference["summary"][k] for k in SCORE_KEYS}
    assert (out / "best_skill.md").read_bytes() == reference["best"]
    # Every call before the kill was answered and cached; none is made again.
    assert calls(log) == reference["calls"]
