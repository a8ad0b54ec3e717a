"""The published skillopt 0.2.0 as an oracle: its own venv under .tools/ (`make oracle`,
which `make test` runs first), driven through tests/support/published_oracle_harness.py.

The fixture reuses the venv, builds it when it is missing (PyPI must be reachable), and
skips with the reason only when it cannot be built. One harness process serves the session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
ORACLE_DIR = ROOT / ".tools" / "skillopt-0.2.0"
ORACLE_PYTHON = ORACLE_DIR / "bin" / "python"
HARNESS = ROOT / "tests" / "support" / "published_oracle_harness.py"


class PublishedOracle:
    """Asks the published package one question at a time over the harness's pipes."""

    def __init__(self, python: Path) -> None:
        # Not run from the repository root and without our PYTHONPATH: the published
        # package must import itself, never our `core` or a stray local module.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self._proc = subprocess.Popen(
            [str(python), str(HARNESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(ORACLE_DIR),
            env=env,
        )

    def __call__(self, op: str, **call: Any) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"op": op, **call}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the published oracle's harness exited; see its stderr above")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"published oracle, {op}: {answer['error']}")
        return answer["result"]

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def _build_oracle() -> str | None:
    """Build the venv as `make oracle` does; the reason it could not be built, or None."""
    try:
        subprocess.run([sys.executable, "-m", "venv", str(ORACLE_DIR)], check=True)
        subprocess.run(
            [str(ORACLE_DIR / "bin" / "pip"), "install", "-q", "skillopt==0.2.0"],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return f"the published skillopt 0.2.0 could not be installed: {detail.strip()[-300:]}"
    (ORACLE_DIR / ".installed").touch()
    return None


@pytest.fixture(scope="session")
def published_oracle():
    if not (ORACLE_DIR / ".installed").exists():
        reason = _build_oracle()
        if reason is not None:
            pytest.skip(f"{reason}; run `make oracle` with PyPI reachable")
    oracle = PublishedOracle(ORACLE_PYTHON)
    yield oracle
    oracle.close()
