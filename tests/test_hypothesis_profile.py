"""The "ci" Hypothesis profile (tests/conftest.py) is what CI and `make test` run under: a
loaded machine must not fail a property test for being slow to generate examples."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
PROBE = "SKILLOPT_PROBE_HYPOTHESIS_PROFILE"


@st.composite
def slow_text(draw):
    time.sleep(0.3)  # generation as slow as on a machine whose cores are all busy
    return draw(st.text(max_size=5))


@pytest.mark.skipif(not os.environ.get(PROBE), reason="run by the tests below, in a child")
@settings(max_examples=8)
@given(slow_text())
def test_probe_slow_generation(text):
    current = settings.default
    assert current.deadline is None and current.derandomize
    assert HealthCheck.too_slow in current.suppress_health_check
    assert isinstance(text, str)


def _probe(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, PROBE: "1", **env}
    full_env.pop("CI", None)
    full_env.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *args,
            f"{__file__}::test_probe_slow_generation",
        ],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ci_variable_loads_the_ci_profile():
    done = _probe(CI="true")
    assert done.returncode == 0, done.stdout[-2000:]


def test_make_test_option_loads_the_ci_profile():
    makefile = (REPO / "Makefile").read_text()
    assert "--hypothesis-profile=ci" in makefile
    done = _probe("--hypothesis-profile=ci")
    assert done.returncode == 0, done.stdout[-2000:]
