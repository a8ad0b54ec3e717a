"""Which night backend a miner left on `auto` follows (issue 37, round 6): one named by
--backend (handoff too), or a recorded one that answers by itself; never the embedded
model or a test double, and not a recorded handoff, which is also what no choice records
(an auto miner then resolves by key: tests/sleep/test_miner_default.py)."""

from __future__ import annotations

import pytest

from skillopt_tui.cli.sleep_night_cmds import miner_follows


@pytest.mark.parametrize(
    ("flag", "recorded", "follows"),
    [
        ("handoff", None, True),
        ("codex", "handoff", True),
        ("openai", None, True),
        ("local", "claude_code", False),  # the flag decides: the embedded model mines worse
        ("scripted", None, False),
        ("auto", "claude_code", False),
        (None, "claude_code", True),
        (None, "anthropic", True),
        (None, "handoff", False),
        (None, None, False),
        (None, "local", False),
    ],
)
def test_the_miner_follows_a_night_backend_that_is_a_model(flag, recorded, follows):
    assert miner_follows(flag, recorded) is follows
