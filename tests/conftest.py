"""Suite-wide settings. The record of agent sessions we start goes to a temporary state
directory, never to the user's ~/.local/state (core.models.agents.process).

Hypothesis gets a "ci" profile for loaded machines (CI runners, `make test` on a busy
laptop): no deadline, no `too_slow` health check (generation speed is not what these
tests check) and derandomized, so a failure reproduces on the next run. Loaded when CI
is set (Hypothesis also detects CI itself; ours replaces its built-in "ci" profile) or
with `--hypothesis-profile=ci`, which `make test` passes."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    print_blob=True,
)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path_factory.mktemp("skillopt-state")))
