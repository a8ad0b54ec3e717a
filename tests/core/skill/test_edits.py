import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.skill.document import SkillDocument
from core.skill.edits import ApplyReport, Edit, EditStatus, apply_edit, apply_edits
from core.skill.protected_blocks import SLOW_UPDATE_BLOCK, read_block, write_block

FRONT = "---\nname: tidy\ndescription: Keep code tidy.\n---\n"
BODY = (
    "# Tidy\n\nAlways run the formatter.\nPrefer small functions.\n\n## Tests\n\nRun the tests.\n"
)
SKILL = FRONT + BODY
GUIDED = write_block(SKILL, SLOW_UPDATE_BLOCK, "Epoch guidance here.")


def applied(text, edit, matching="first"):
    new, outcome = apply_edit(text, edit, matching)
    assert outcome.status is EditStatus.APPLIED, outcome.reason
    return new


def refused(text, edit, status, matching="first"):
    new, outcome = apply_edit(text, edit, matching)
    assert outcome.status is status, (outcome.status, outcome.reason)
    assert new == text
    assert outcome.reason
    return outcome.reason


# --- applied --------------------------------------------------------------------------


def test_insert_after_a_whole_line_goes_on_the_next_line():
    new = applied(SKILL, Edit("insert_after", "Always run the formatter.", "Never commit secrets."))
    assert "Always run the formatter.\nNever commit secrets.\nPrefer small functions.\n" in new


def test_insert_after_mid_line_target_goes_after_that_line():
    new = applied(SKILL, Edit("insert_after", "Always run", "Use ruff."))
    assert "Always run the formatter.\nUse ruff.\nPrefer" in new


def test_insert_after_target_ending_with_newline():
    new = applied(SKILL, Edit("insert_after", "Prefer small functions.\n", "Name things well."))
    assert "Prefer small functions.\nName things well.\n\n## Tests" in new


def test_insert_after_multiline_content_keeps_its_lines():
    new = applied(SKILL, Edit("insert_after", "## Tests\n", "\n- one\n- two\n"))
    assert "## Tests\n\n- one\n- two\n\nRun the tests.\n" in new


def test_insert_after_last_line_without_trailing_newline():
    text = "a\nlast"
    assert applied(text, Edit("insert_after", "last", "new")) == "a\nlast\nnew"


def test_insert_after_last_line_with_trailing_newline():
    assert applied("a\nlast\n", Edit("insert_after", "last", "new")) == "a\nlast\nnew\n"


def test_append_at_end():
    assert applied(SKILL, Edit("append", "", "Ship it.")) == SKILL + "Ship it.\n"


def test_append_ignores_target():
    assert applied("a\n", Edit("append", "does not exist", "b")) == "a\nb\n"


def test_append_without_trailing_newline_and_to_empty():
    assert applied("a", Edit("append", "", "b\n")) == "a\nb"
    assert applied("", Edit("append", "", "b")) == "b\n"


def test_append_goes_before_trailing_protected_block():
    new = applied(GUIDED, Edit("append", "", "Ship it."))
    assert new.index("Ship it.") < new.index("<!-- skillopt:slow-update:start -->")
    assert "Run the tests.\n\nShip it.\n\n<!-- skillopt:slow-update:start -->" in new
    assert read_block(new, SLOW_UPDATE_BLOCK) == "Epoch guidance here."


def test_append_after_a_block_that_is_not_last():
    text = write_block("Intro.\n", "notes", "n") + "\nTail.\n"
    new = applied(text, Edit("append", "", "More."))
    assert new.endswith("Tail.\nMore.\n")


def test_replace():
    new = applied(SKILL, Edit("replace", "Prefer small functions.", "Prefer pure functions."))
    assert new == SKILL.replace("Prefer small functions.", "Prefer pure functions.")


def test_replace_with_empty_content_acts_like_delete():
    new = applied(SKILL, Edit("replace", "Prefer small functions.", ""))
    assert new == SKILL.replace("Prefer small functions.\n", "")


def test_delete_whole_line_takes_its_line_break():
    new = applied(SKILL, Edit("delete", "Prefer small functions."))
    assert new == SKILL.replace("Prefer small functions.\n", "")


def test_delete_part_of_a_line():
    new = applied(SKILL, Edit("delete", " the formatter"))
    assert "Always run.\n" in new


def test_delete_paragraph_tidies_blank_lines():
    text = "p1\n\nmiddle para\n\np2\n"
    assert applied(text, Edit("delete", "middle para")) == "p1\n\np2\n"


def test_delete_keeps_blank_lines_that_were_already_there():
    text = "p1\n\n\n\nx\np2\n"
    assert applied(text, Edit("delete", "x")) == "p1\n\n\n\np2\n"


def test_delete_last_line_without_trailing_newline():
    assert applied("a\nb", Edit("delete", "b")) == "a"
    assert applied("a\r\nb", Edit("delete", "b")) == "a"


# The strict_edit_targets overlay: exact, then whitespace-normalised, one match only.
# (The published default, first exact occurrence, is proven in tests/core/published/.)


def test_whitespace_normalised_match_maps_back_to_original_span():
    text = "Intro.\n\nAlways   run\n  the formatter.\nEnd.\n"
    new = applied(text, Edit("replace", "Always run the formatter.", "Format."), "strict")
    assert new == "Intro.\n\nFormat.\nEnd.\n"


def test_normalised_match_with_surrounding_whitespace_in_target():
    new = applied(SKILL, Edit("replace", "  \nPrefer   small\tfunctions. \n", "X."), "strict")
    assert "\nX.\n" in new


# --- refusals -------------------------------------------------------------------------


def test_target_not_found_quotes_a_short_prefix():
    long = "This sentence is nowhere in the skill and it goes on for quite a while longer"
    reason = refused(SKILL, Edit("replace", long, "x"), EditStatus.TARGET_NOT_FOUND)
    assert "This sentence is nowhere" in reason
    assert long not in reason


def test_ambiguous_exact():
    text = "Run it.\nRun it.\n"
    assert "2 places" in refused(text, Edit("delete", "Run it."), EditStatus.AMBIGUOUS, "strict")


def test_ambiguous_after_normalisation():
    text = "run  it\nand run\tit\n"
    refused(text, Edit("replace", "run it", "x"), EditStatus.AMBIGUOUS, "strict")


def test_exact_single_match_wins_over_normalised_ones():
    text = "a  b\na b\n"
    assert applied(text, Edit("replace", "a b", "c"), "strict") == "a  b\nc\n"


def test_default_takes_the_first_exact_occurrence_and_never_normalises():
    assert applied("Run it.\nRun it.\n", Edit("delete", "Run it.")) == "Run it.\n"
    refused("run  it\n", Edit("replace", "run it", "x"), EditStatus.TARGET_NOT_FOUND)


def test_default_insert_after_without_a_target_found_appends():
    assert applied("a\n", Edit("insert_after", "", "x")) == "a\nx\n"
    assert applied("a\n", Edit("insert_after", "zzz", "x")) == "a\nx\n"
    new = applied(GUIDED, Edit("insert_after", "zzz", "Ship it."))
    assert new.index("Ship it.") < new.index("<!-- skillopt:slow-update:start -->")


@pytest.mark.parametrize(
    "edit",
    [
        Edit("insert_after", "", "x"),
        Edit("replace", "   ", "x"),
        Edit("delete", ""),
        Edit("rewrite", "Tidy", "x"),
        Edit("insert_after", "Tidy", ""),
        Edit("append", "", "  \n"),
        Edit("replace", None, "x"),  # type: ignore[arg-type]
        Edit("replace", "Tidy", 3),  # type: ignore[arg-type]
        Edit(None, "Tidy", "x"),  # type: ignore[arg-type]
    ],
)
def test_invalid(edit):
    refused(SKILL, edit, EditStatus.INVALID, "strict")
    if edit.target not in ("", "   "):  # the default appends / looks for "   " instead
        refused(SKILL, edit, EditStatus.INVALID)


def test_noop_replace_is_invalid():
    assert "nothing" in refused(SKILL, Edit("replace", "Tidy", "Tidy"), EditStatus.INVALID)


def test_protected_span_overlapping_start_marker():
    edit = Edit("replace", "Run the tests.\n\n<!-- skillopt", "x")
    assert "slow-update" in refused(GUIDED, edit, EditStatus.PROTECTED)


def test_protected_span_fully_inside():
    refused(GUIDED, Edit("replace", "Epoch guidance here.", "Mine now."), EditStatus.PROTECTED)
    refused(GUIDED, Edit("delete", "guidance"), EditStatus.PROTECTED)


def test_protected_insertion_point_inside():
    refused(
        GUIDED,
        Edit("insert_after", "<!-- skillopt:slow-update:start -->", "x"),
        EditStatus.PROTECTED,
    )
    refused(GUIDED, Edit("insert_after", "Epoch guidance here.", "x"), EditStatus.PROTECTED)


def test_protected_whole_block_delete():
    block = GUIDED[GUIDED.index("<!--") :].rstrip("\n")
    refused(GUIDED, Edit("delete", block), EditStatus.PROTECTED)


def test_insert_after_end_marker_is_outside_the_block():
    new = applied(GUIDED, Edit("insert_after", "<!-- skillopt:slow-update:end -->", "After."))
    assert new.endswith("<!-- skillopt:slow-update:end -->\nAfter.\n")


def test_edit_next_to_block_is_allowed():
    new = applied(GUIDED, Edit("replace", "Run the tests.", "Run all tests."))
    assert read_block(new, SLOW_UPDATE_BLOCK) == "Epoch guidance here."


def test_content_with_marker_is_protected():
    edit = Edit(
        "append", "", "<!-- skillopt:slow-update:start -->\nfake\n<!-- skillopt:slow-update:end -->"
    )
    refused(SKILL, edit, EditStatus.PROTECTED)


def test_unclosed_block_protects_to_the_end():
    text = "Intro.\n<!-- skillopt:x:start -->\nowner text\n"
    refused(text, Edit("append", "", "more"), EditStatus.PROTECTED)
    refused(text, Edit("replace", "owner text", "y"), EditStatus.PROTECTED)
    assert applied(text, Edit("replace", "Intro.", "Hi.")).startswith("Hi.\n")


# --- frontmatter ----------------------------------------------------------------------


def test_body_edits_leave_frontmatter_bytes_untouched():
    odd_front = "---\nname:   tidy   # keep my spacing\ndescription: >\n  folded\n---\n"
    text = odd_front + BODY
    edits = [
        Edit("insert_after", "# Tidy", "Intro."),
        Edit("append", "", "End."),
        Edit("delete", "Run the tests."),
        Edit("replace", "Prefer small functions.", "Prefer pure functions."),
    ]
    new, report = apply_edits(text, edits)
    assert report.applied == 4
    assert new.startswith(odd_front)
    assert SkillDocument.parse(new).frontmatter_raw == SkillDocument.parse(text).frontmatter_raw


def test_frontmatter_edit_that_still_parses_is_applied():
    new = applied(
        SKILL, Edit("replace", "description: Keep code tidy.", "description: Keep code very tidy.")
    )
    assert SkillDocument.parse(new).frontmatter["description"] == "Keep code very tidy."


def test_frontmatter_edit_that_breaks_yaml_is_invalid():
    reason = refused(
        SKILL, Edit("insert_after", "name: tidy", "this: is: broken: ["), EditStatus.INVALID
    )
    assert "frontmatter" in reason


def test_removing_frontmatter_fence_is_invalid():
    refused(SKILL, Edit("replace", "---\nname: tidy", "name: tidy"), EditStatus.INVALID)


def test_edit_creating_frontmatter_is_invalid():
    text = "Intro line\n---\nname: x\n---\nbody\n"
    refused(text, Edit("delete", "Intro line"), EditStatus.INVALID)


def test_insert_after_closing_fence_goes_into_body():
    new = applied(SKILL, Edit("insert_after", "Keep code tidy.\n---", "Preface."))
    assert SkillDocument.parse(new).body.startswith("Preface.\n# Tidy")


# --- CRLF -----------------------------------------------------------------------------


CRLF_SKILL = SKILL.replace("\n", "\r\n")


def test_crlf_insert_content_gets_crlf():
    new = applied(CRLF_SKILL, Edit("insert_after", "Always run the formatter.", "one\ntwo"))
    assert "Always run the formatter.\r\none\r\ntwo\r\nPrefer" in new
    assert "\n" not in new.replace("\r\n", "")


def test_crlf_lf_target_matches_by_normalisation():
    new = applied(
        CRLF_SKILL,
        Edit("replace", "Always run the formatter.\nPrefer small functions.", "A\nB"),
        "strict",
    )
    assert "\r\nA\r\nB\r\n" in new
    assert "\n" not in new.replace("\r\n", "")


def test_crlf_delete_and_append():
    new = applied(CRLF_SKILL, Edit("delete", "Prefer small functions."))
    assert new == CRLF_SKILL.replace("Prefer small functions.\r\n", "")
    new = applied(CRLF_SKILL, Edit("append", "", "x\ny"))
    assert new == CRLF_SKILL + "x\r\ny\r\n"


def test_crlf_append_before_block():
    doc = write_block(CRLF_SKILL, SLOW_UPDATE_BLOCK, "g")
    new = applied(doc, Edit("append", "", "Ship."))
    assert "Run the tests.\r\n\r\nShip.\r\n\r\n<!-- skillopt:slow-update:start -->\r\ng\r\n" in new


# --- apply_edits ----------------------------------------------------------------------


def test_apply_edits_in_order_with_failures_leaving_text_unchanged():
    edits = [
        Edit("replace", "Prefer small functions.", "Prefer pure functions."),
        Edit("delete", "Prefer small functions."),  # gone after the first edit
        Edit("insert_after", "Prefer pure functions.", "Avoid globals."),  # sees the first edit
        Edit("bogus"),
    ]
    new, report = apply_edits(SKILL, edits)
    assert isinstance(report, ApplyReport)
    assert [o.status for o in report.outcomes] == [
        EditStatus.APPLIED,
        EditStatus.TARGET_NOT_FOUND,
        EditStatus.APPLIED,
        EditStatus.INVALID,
    ]
    assert "Prefer pure functions.\nAvoid globals.\n" in new
    assert report.applied == 2
    assert [o.edit for o in report.unmatched()] == [edits[1], edits[3]]
    assert report.to_dict()[1]["status"] == "target_not_found"


def test_apply_edits_empty_list():
    new, report = apply_edits(SKILL, [])
    assert new == SKILL and report.outcomes == ()


_words = st.sampled_from(["alpha", "beta", "gamma", "delta", "  ", "\n", "\n\n", "- item", "# H"])


@given(
    st.lists(_words, min_size=1, max_size=12).map("".join),
    st.lists(
        st.builds(
            Edit,
            op=st.sampled_from(["insert_after", "append", "replace", "delete"]),
            target=st.sampled_from(["alpha", "beta", "gamma delta", "- item", "", "zeta"]),
            content=st.sampled_from(["", "new", "x\ny", "beta"]),
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_any_edit_sequence_keeps_block_and_frontmatter(body, edits, crlf):
    text = write_block(FRONT + body, SLOW_UPDATE_BLOCK, "keep me")
    if crlf:
        text = text.replace("\n", "\r\n")
    new, report = apply_edits(text, edits)
    assert len(report.outcomes) == len(edits)
    expected_block = "keep me"
    assert read_block(new, SLOW_UPDATE_BLOCK) == expected_block
    before, after = SkillDocument.parse(text), SkillDocument.parse(new)
    assert after.frontmatter_raw == before.frontmatter_raw
    if crlf:
        assert "\n" not in new.replace("\r\n", "")
    if report.applied == 0:
        assert new == text


_pieces = st.sampled_from(
    [
        "Rule.",
        " ",
        "\n",
        "\r\n",
        "\n\n",
        "- a",
        "x",
        "---",
        "<!-- skillopt:other:end -->",
        "\t",
    ]
)


@given(
    st.lists(_pieces, max_size=15).map("".join),
    st.data(),
    st.sampled_from(["insert_after", "append", "replace", "delete"]),
    st.sampled_from(["", "y", "two\nlines\n", "\r\nz"]),
)
def test_targets_sliced_from_the_document_never_corrupt_it(body, data, op, content):
    text = write_block(FRONT + "# T\n" + body, SLOW_UPDATE_BLOCK, "owned\ntext")
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, min(len(text), i + 60)))
    edit = Edit(op, text[i:j], content)
    new, outcome = apply_edit(text, edit)
    if outcome.status is not EditStatus.APPLIED:
        assert new == text
        return
    assert new != text
    assert read_block(new, SLOW_UPDATE_BLOCK) == "owned\ntext"
    assert SkillDocument.parse(new).frontmatter is not None
    if op != "append":
        block_start = text.index("<!-- skillopt:slow-update:start -->")
        block_end = text.index("<!-- skillopt:slow-update:end -->") + len(
            "<!-- skillopt:slow-update:end -->"
        )
        if op in ("replace", "delete") and text.count(text[i:j]) == 1:
            assert j <= block_start or i >= block_end
