"""A check about how new code is written is not applicable, not failed, when the replay's
diff adds no such code (sleep/mine/check_rules.not_applicable): the photos night's mined
type-hint check failed a correct `--since` change that added no function."""

from __future__ import annotations

import pytest

from sleep.mine.correction_checks import checks_for
from sleep.mine.tasks import MinedTask, ReplayEvidence
from sleep.night.replay_env import ReplayEnvironment

SINCE = """\
--- a/photos/cli.py
+++ b/photos/cli.py
@@ -10,3 +10,4 @@
     parser.add_argument("--dest")
+    parser.add_argument("--since", help="only photos taken on or after this date")
"""
NEW_FUNCTION = """\
--- a/photos/dates.py
+++ b/photos/dates.py
@@ -1,0 +1,2 @@
+def parse_since(text):
+    return text
"""


def scored(diff: str):
    [hints] = checks_for("and type hints on new functions pls", agentic=True)
    task = MinedTask(id="t-since", intent="add a --since flag", project=None, kind="agentic")
    task.rubric, task.checks = "a --since flag", [hints]
    env = ReplayEnvironment({"val": [task]}, judge=None)
    [item] = env.load_split("val")
    verdict = {"score": 1.0, "reason": "does what was asked"}
    seen = ReplayEvidence("Added --since.", diff=diff, commands=[])
    return env._scored(
        item, "Added --since.", verdict, seen=seen, trajectory=[], usage=(0, 0),
        latency_s=0.0, cached=False,
    )  # fmt: skip


def test_a_change_that_adds_no_function_is_not_failed_by_the_type_hint_check():
    """Fails on the old code: the check failed (soft 0.75 for a judge's 1.0)."""
    result = scored(SINCE)
    assert (result.soft, result.hard) == (1.0, 1.0), result.explanation
    assert "not applicable: its changes add /" in result.explanation
    assert "(its changes add no function)" in result.explanation
    assert not result.lacked_inputs  # not applicable is not a missing input


def test_a_new_function_without_hints_still_fails_it():
    result = scored(NEW_FUNCTION)
    assert result.soft == pytest.approx(0.75) and "failed: its changes add" in result.explanation
    hinted = NEW_FUNCTION.replace("(text):", "(text: str) -> str:")
    assert scored(hinted).soft == 1.0


def test_a_docstring_check_is_not_applicable_to_a_change_that_defines_nothing():
    [docs] = checks_for("and add docstrings pls", agentic=True)
    task = MinedTask(id="t-doc", intent="add a --since flag", project=None, kind="agentic")
    task.rubric, task.checks = "a --since flag", [docs]
    env = ReplayEnvironment({"val": [task]}, judge=None)
    [item] = env.load_split("val")
    verdict = {"score": 1.0, "reason": "fine"}

    def soft(diff: str) -> float:
        seen = ReplayEvidence("Done.", diff=diff, commands=[])
        return env._scored(
            item, "Done.", verdict, seen=seen, trajectory=[], usage=(0, 0), latency_s=0.0,
            cached=False,
        ).soft  # fmt: skip

    assert soft(SINCE) == 1.0  # adds no function or class: not applicable
    assert soft(NEW_FUNCTION) == pytest.approx(0.75)  # a new function without a docstring
