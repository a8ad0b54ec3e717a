"""Suite-wide: the record of agent sessions we start goes to a temporary state directory,
never to the user's ~/.local/state (core.models.agent_process)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path_factory.mktemp("skillopt-state")))
