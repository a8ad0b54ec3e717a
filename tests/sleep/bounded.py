"""Run a piece of code in a child Python with a generous time limit: a test of "this
finishes" that fails on a hang (the child is killed and the test says so) and never
asserts how fast anything is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Far above what linear code needs on a loaded 2-core machine, far below what the
# quadratic or blocking code took (minutes to forever on the same inputs).
LIMIT_S = 120


def run_bounded(code: str, *, limit_s: float = LIMIT_S, env: dict | None = None) -> str:
    """stdout of `python -c code`; fails the calling test if it is still running after
    `limit_s` seconds or exits non-zero."""
    child_env = {**os.environ, **(env or {}), "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=limit_s,
            env=child_env,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running after {limit_s} s: it hangs") from None
    assert done.returncode == 0, done.stderr
    return done.stdout
