"""The checks a replay applies without a judge (sleep/mine/check_rules.py)."""

from __future__ import annotations

from sleep.mine.check_rules import first_line_within

LONG = " ".join(["word"] * 30)


def test_the_first_line_is_the_first_line_of_content_not_a_code_fence():
    """Fails on the old code: an opening ``` counted as the reply's first line (issue 37,
    ledger round 6), so a 30-word line inside a block passed a 15-word limit."""
    assert first_line_within(f"```\n{LONG}\n```", "15 words") is False
    assert first_line_within(f"\n\n```text\n{LONG}\n```", "15 words") is False
    assert first_line_within("```bash\npytest -k ledger\n```\n" + LONG, "15 words") is True
    assert first_line_within("~~~sh\npytest --collect-only -q\n~~~", "3 words") is True
    assert first_line_within("no fence here\n" + LONG, "3 words") is True
    assert first_line_within(LONG, "20 chars") is False
