"""What decided a moved item's score stays readable in the staged commit
(core/skills_repo/repo_stager.py `moved_lines`): the greenhouse night's commit cut it at
160 characters with no mark, so alert_line read "mined checks" where night.json said
"mined checks 5/5 passed" (issue 37, round 6)."""

from __future__ import annotations

from core.skills_repo.repo_stager import DECIDED_CHARS, moved_lines

REASON = (
    "judge: the reply adds alert_line() with a test in tests/test_alerts.py, uses "
    "timezone-aware UTC datetimes and raises on a missing reading as asked; "
    "mined checks 5/5 passed"
)


def _line(decided: str) -> str:
    item = {"id": "alert", "question": "add alert_line()", "before": 0.4, "after": 0.9,
            "decided_by": decided}  # fmt: skip
    return moved_lines([item])[2]


def test_what_decided_is_kept_whole():
    """Fails on the old code: the line ended "…raises on a missing reading as asked; mined
    checks" (cut at 160, no mark)."""
    assert len(REASON) > 160
    assert _line(REASON).endswith("decided by " + REASON)


def test_what_decided_is_cut_with_a_visible_mark():
    """Fails on the old code: a cut line had no mark."""
    line = _line(REASON * 10)
    assert line.endswith("…")
    assert len(line.split("decided by ", 1)[1]) == DECIDED_CHARS
