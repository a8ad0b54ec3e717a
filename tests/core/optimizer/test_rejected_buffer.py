import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.optimizer.rejected_buffer import NO_REJECTIONS, PATTERNS_HEADER, RejectedEditBuffer
from core.skill.edits import Edit


def filled():
    buf = RejectedEditBuffer()
    buf.add_failure_patterns(0, "Answers miss the unit.\nDates in the wrong format.")
    buf.add_rejection(
        0,
        [
            Edit("replace", "Answer briefly.", "Answer briefly, with units.", "units"),
            Edit("append", "", "Always use ISO dates."),
            Edit("delete", "Old rule.\nSecond line."),
        ],
        0.4,
        0.45,
        "rejected: 0.4000 does not beat best 0.4500",
    )
    buf.add_rejection(
        1, [Edit("insert_after", "# Title", "x")], None, 0.45, "frontmatter does not parse"
    )
    return buf


def test_empty_renders_nothing():
    assert RejectedEditBuffer().render() == ""


def test_render_newest_first_with_scores_and_edits():
    out = filled().render()
    assert out.startswith("### Step 1: rejected")
    assert (
        out.index("Step 1: rejected") < out.index("Step 0: rejected") < out.index(PATTERNS_HEADER)
    )
    assert "candidate 0.4000 vs best 0.4500" in out
    assert "candidate not scored vs best 0.4500" in out
    assert '- replace "Answer briefly." → "Answer briefly, with units."' in out
    assert '- append "Always use ISO dates."' in out
    assert '- delete "Old rule.\\nSecond line."' in out  # newlines escaped: one line per edit
    assert "Reason: frontmatter does not parse" in out
    assert "Dates in the wrong format." in out


def test_long_edit_text_is_clipped_when_bounded():
    """The bounded_buffer overlay (rejected_buffer_chars 4000)."""
    buf = RejectedEditBuffer()
    buf.add_rejection(0, [Edit("replace", "t" * 500, "c" * 500)], 0.1, 0.2, "r")
    out = buf.render(max_chars=4000)
    assert "t" * 79 + "…" in out and "t" * 81 not in out
    assert "c" * 159 + "…" in out and "c" * 161 not in out


def test_unbounded_by_default_as_published():
    """Issue 38: every rejected edit whole, however many. Fails on the old code (4,000
    characters, targets and contents clipped to 80 and 160)."""
    buf = RejectedEditBuffer()
    for step in range(40):
        buf.add_rejection(step, [Edit("replace", "t" * 500, f"{step}" + "c" * 500)], 0.1, 0.2, "r")
    out = buf.render()
    assert len(out) > 40 * 1000 and "…" not in out and "omitted" not in out
    assert all(f'"{step}{"c" * 500}"' in out for step in range(40))
    assert buf.render_rejections() == out


def test_clipping_keeps_newest_and_says_how_many_were_left_out():
    buf = RejectedEditBuffer()
    for step in range(30):
        buf.add_rejection(
            step, [Edit("append", "", f"rule number {step} " + "x" * 60)], 0.1, 0.2, "lost"
        )
    out = buf.render(max_chars=1000)
    assert len(out) <= 1000
    assert "Step 29:" in out and "Step 0:" not in out
    assert "older entries omitted" in out
    shown = out.count("### Step")
    assert f"_({30 - shown} older entries omitted)_" in out


def test_single_huge_entry_is_cut_not_dropped():
    buf = RejectedEditBuffer()
    buf.add_failure_patterns(3, "pattern " * 2000)
    out = buf.render(max_chars=500)
    assert len(out) <= 500 and "Step 3" in out and out.endswith("…")


@given(st.integers(0, 3000), st.integers(0, 12))
def test_render_never_exceeds_budget(max_chars, entries):
    buf = RejectedEditBuffer()
    for step in range(entries):
        buf.add_failure_patterns(step, "p" * (step * 37))
        buf.add_rejection(step, [Edit("replace", "a" * step, "b")], step / 10, 0.5, "lost " * step)
    out = buf.render(max_chars=max_chars)
    assert len(out) <= max_chars
    if entries == 0:
        assert out == ""
    elif max_chars >= 200:
        assert out.startswith("### Step") and "### Step" in out
    if out:
        assert "### Step" in out


def test_blank_failure_patterns_are_skipped():
    buf = RejectedEditBuffer()
    buf.add_failure_patterns(0, "  \n")
    assert len(buf) == 0 and buf.render() == ""


def test_reset():
    buf = filled()
    buf.reset()
    assert len(buf) == 0 and buf.render() == ""


def test_round_trip_exact_through_json():
    buf = filled()
    data = json.loads(json.dumps(buf.to_dict()))
    restored = RejectedEditBuffer.from_dict(data)
    assert restored == buf
    assert restored.to_dict() == buf.to_dict()
    assert restored.render(max_chars=300) == buf.render(max_chars=300)


def test_round_trip_of_empty_buffer():
    assert RejectedEditBuffer.from_dict(RejectedEditBuffer().to_dict()) == RejectedEditBuffer()


def test_from_dict_rejects_unknown_version():
    with pytest.raises(ValueError):
        RejectedEditBuffer.from_dict({"version": 99, "entries": []})


def test_failure_patterns_are_never_under_the_edits_heading():
    """Issue 22 item 9: the prompts' section "Edits tried earlier this epoch that did not
    help" held an earlier step's failure examples. The edits come first; the patterns only
    after a heading of their own (of the prompt's level, so the edits' section ends)."""
    buf = RejectedEditBuffer()
    buf.add_failure_patterns(0, "2 of 3 train items failed, e.g.: Peru: wrong")
    out = buf.render()
    edits_part, _, patterns_part = out.partition(PATTERNS_HEADER)
    assert edits_part.strip() == NO_REJECTIONS
    assert "Peru: wrong" in patterns_part
    buf.add_rejection(1, [Edit("append", "", "Name the capital.")], 0.2, 0.4, "lost")
    edits_part, _, patterns_part = buf.render().partition(PATTERNS_HEADER)
    assert '- append "Name the capital."' in edits_part and "Peru" not in edits_part
    assert "Peru: wrong" in patterns_part


def test_render_rejections_holds_only_the_rejected_edits():
    assert RejectedEditBuffer().render_rejections() == ""
    buf = filled()
    out = buf.render_rejections()
    assert "Step 1: rejected" in out and "Step 0: rejected" in out
    assert PATTERNS_HEADER not in out and "Dates in the wrong format." not in out
    only_patterns = RejectedEditBuffer()
    only_patterns.add_failure_patterns(0, "x")
    assert only_patterns.render_rejections() == ""
