"""Edit application against the published package: at training's default (edit_targets
first, the published layout) our skill after a list of edits is the published one,
character for character (blank lines included); the strict_edit_targets overlay differs exactly where it is documented to
(core/skill/edits.py). Targets never end with a line break:
there the published insert_after goes one line further down (after the line *following*
the target), a quirk ours does not copy (docs/how-it-works/fidelity.md)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.skill.edits import Edit, EditStatus, apply_edits

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "rule", "answer", "x"])
LINES = st.lists(st.lists(WORDS, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=8)
SKILLS = LINES.map(lambda lines: "\n".join(lines) + "\n")


@st.composite
def skill_and_edits(draw):
    skill = draw(SKILLS)
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert_after", "append", "replace", "delete"]))
        start = draw(st.integers(0, len(skill) - 1))
        end = draw(st.integers(start + 1, min(len(skill), start + 20)))
        quoted = skill[start:end].rstrip("\n")
        target = draw(st.sampled_from([quoted, "missing words", ""])) if op != "append" else ""
        content = draw(st.lists(WORDS, min_size=1, max_size=3).map(" ".join))
        edits.append(Edit(op=op, target=target, content=content))
    return skill, edits


@settings(max_examples=150, deadline=None)
@given(case=skill_and_edits())
def test_default_edits_match_published(published_oracle, case):
    skill, edits = case
    ours, _ = apply_edits(skill, edits, "first", "published")
    theirs = published_oracle(
        "apply_patch",
        skill=skill,
        edits=[{"op": e.op, "target": e.target, "content": e.content} for e in edits],
    )
    assert ours == theirs


# The cases, each a difference the strict overlay keeps on purpose.
SKILL = "# Rules\nAlways cite.\nBe brief.\nAlways cite.\n"


def test_missing_insert_after_target_appends_by_default_and_is_dropped_when_strict(
    published_oracle,
):
    edit = Edit("insert_after", target="Not in the skill.", content="New rule.")
    theirs = published_oracle("apply_patch", skill=SKILL, edits=[edit.to_dict()])
    ours, report = apply_edits(SKILL, [edit], "first", "published")
    assert ours == theirs == SKILL.rstrip() + "\n\nNew rule.\n"
    strict, strict_report = apply_edits(SKILL, [edit], "strict")
    assert strict == SKILL
    assert strict_report.outcomes[0].status is EditStatus.TARGET_NOT_FOUND


def test_repeated_target_edits_first_occurrence_by_default_and_is_ambiguous_when_strict(
    published_oracle,
):
    edit = Edit("replace", target="Always cite.", content="Cite sources.")
    theirs = published_oracle("apply_patch", skill=SKILL, edits=[edit.to_dict()])
    ours, _ = apply_edits(SKILL, [edit])
    assert ours == theirs == "# Rules\nCite sources.\nBe brief.\nAlways cite.\n"
    strict, report = apply_edits(SKILL, [edit], "strict")
    assert strict == SKILL and report.outcomes[0].status is EditStatus.AMBIGUOUS


def test_whitespace_differences_do_not_match_by_default_but_do_when_strict(published_oracle):
    edit = Edit("delete", target="Be   brief.")
    theirs = published_oracle("apply_patch", skill=SKILL, edits=[edit.to_dict()])
    ours, report = apply_edits(SKILL, [edit])
    assert ours == theirs == SKILL
    assert report.outcomes[0].status is EditStatus.TARGET_NOT_FOUND
    strict, _ = apply_edits(SKILL, [edit], "strict")
    assert "Be brief." not in strict
