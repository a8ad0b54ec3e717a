import pytest

from core.skill.document import SkillError
from core.skill.protected_blocks import (
    SLOW_UPDATE_BLOCK,
    end_marker,
    find_blocks,
    marker_problems,
    read_block,
    span_touches_block,
    start_marker,
    write_block,
)

START = start_marker(SLOW_UPDATE_BLOCK)
END = end_marker(SLOW_UPDATE_BLOCK)
END_OTHER = end_marker("other")
DOC = f"# Skill\n\nRule one.\n\n{START}\nGuidance.\n{END}\n"


def test_markers_text():
    assert START == "<!-- skillopt:slow-update:start -->"
    assert END == "<!-- skillopt:slow-update:end -->"


def test_find_blocks_offsets():
    (block,) = find_blocks(DOC)
    assert block.name == "slow-update"
    assert DOC[block.start : block.end] == f"{START}\nGuidance.\n{END}"
    assert DOC[block.content_start : block.content_end] == "Guidance."


def test_read_block_present_absent_and_empty():
    assert read_block(DOC, SLOW_UPDATE_BLOCK) == "Guidance."
    assert read_block("# nothing\n", SLOW_UPDATE_BLOCK) is None
    assert read_block(f"{START}\n{END}\n", SLOW_UPDATE_BLOCK) == ""
    assert read_block(f"{START}{END}", SLOW_UPDATE_BLOCK) == ""


def test_markers_tolerate_spacing():
    text = "<!--skillopt:notes:start-->\nx\n<!--   skillopt:notes:end   -->"
    assert read_block(text, "notes") == "x"


def test_write_block_replaces_only_the_block():
    out = write_block(DOC, SLOW_UPDATE_BLOCK, "New guidance.\nSecond line.")
    assert out == f"# Skill\n\nRule one.\n\n{START}\nNew guidance.\nSecond line.\n{END}\n"
    assert read_block(out, SLOW_UPDATE_BLOCK) == "New guidance.\nSecond line."


def test_write_block_creates_at_end_after_blank_line():
    assert write_block("# Skill\nRule.\n", "notes", "N") == (
        "# Skill\nRule.\n\n<!-- skillopt:notes:start -->\nN\n<!-- skillopt:notes:end -->\n"
    )


def test_write_block_keeps_crlf_and_missing_trailing_newline():
    out = write_block("# Skill\r\nRule.", SLOW_UPDATE_BLOCK, "a\nb\n")
    assert out == f"# Skill\r\nRule.\r\n\r\n{START}\r\na\r\nb\r\n{END}"
    assert read_block(out, SLOW_UPDATE_BLOCK) == "a\r\nb"


def test_write_block_on_empty_and_frontmatter_only_documents():
    assert write_block("", "n", "x") == "<!-- skillopt:n:start -->\nx\n<!-- skillopt:n:end -->\n"
    assert write_block("---\nname: a\n---\n", "n", "x").startswith("---\nname: a\n---\n\n<!--")


def test_write_block_empty_content():
    out = write_block(DOC, SLOW_UPDATE_BLOCK, "")
    assert f"{START}\n{END}" in out
    assert read_block(out, SLOW_UPDATE_BLOCK) == ""


def test_write_block_rejects_bad_name_and_marker_content():
    with pytest.raises(ValueError):
        write_block(DOC, "bad name", "x")
    with pytest.raises(ValueError):
        write_block(DOC, "n", f"sneaky {END}")


@pytest.mark.parametrize(
    "fragment, expected",
    [
        ("Rule one.", None),  # plain body text
        (f"one.\n\n{START[:10]}", SLOW_UPDATE_BLOCK),  # overlaps the start marker
        ("Guidance.", SLOW_UPDATE_BLOCK),  # fully inside
        (f"{END}\n", SLOW_UPDATE_BLOCK),  # the end marker itself
    ],
)
def test_span_touches_block(fragment, expected):
    start = DOC.index(fragment)
    block = span_touches_block(DOC, start, start + len(fragment))
    assert (block.name if block else None) == expected


def test_insertion_point_semantics():
    (block,) = find_blocks(DOC)
    assert span_touches_block(DOC, block.start, block.start) is None  # just before
    assert span_touches_block(DOC, block.end, block.end) is None  # just after
    assert span_touches_block(DOC, block.content_start, block.content_start) is not None
    assert span_touches_block(DOC, block.start + 1, block.start + 1) is not None


def test_span_ending_at_block_start_does_not_touch():
    (block,) = find_blocks(DOC)
    assert span_touches_block(DOC, 0, block.start) is None
    assert span_touches_block(DOC, 0, block.start + 1) is not None


def test_unclosed_start_protects_the_rest():
    text = f"Intro.\n{START}\nno end here\nmore\n"
    assert find_blocks(text) == []
    tail = text.index("more")
    assert span_touches_block(text, tail, tail + 4) is not None
    assert span_touches_block(text, len(text), len(text)) is not None
    assert span_touches_block(text, 0, 6) is None


def test_stray_end_marker_protects_itself():
    text = f"Intro.\n{END}\nafter\n"
    at = text.index(END)
    assert span_touches_block(text, at, at + 3) is not None
    assert span_touches_block(text, 0, 6) is None


def test_write_block_refuses_unbalanced_markers_of_that_block():
    with pytest.raises(SkillError, match="unbalanced"):
        write_block(f"Intro.\n{START}\nhalf\n", SLOW_UPDATE_BLOCK, "x")
    # Another block's broken markers do not stop this owner.
    out = write_block(f"Intro.\n{END_OTHER}\n", SLOW_UPDATE_BLOCK, "x")
    assert read_block(out, SLOW_UPDATE_BLOCK) == "x"


def test_marker_problems():
    assert marker_problems(DOC) == []
    assert any("without an end" in p for p in marker_problems(f"{START}\nx\n"))
    assert any("without a start" in p for p in marker_problems(f"x\n{END}\n"))
    twice = DOC + f"\n{START}\ny\n{END}\n"
    assert any("more than once" in p for p in marker_problems(twice))
    nested = "<!-- skillopt:a:start -->\n<!-- skillopt:b:start -->\n<!-- skillopt:b:end -->\n<!-- skillopt:a:end -->"
    assert any("inside" in p for p in marker_problems(nested))


def test_block_changes_name_every_altered_missing_or_added_block():
    from core.skill.protected_blocks import block_changes

    assert block_changes(DOC, DOC.replace("Rule one.", "Rule two.")) == []
    changed = DOC.replace("Guidance.", "Guidance!")
    assert block_changes(DOC, changed) == ["protected block 'slow-update' was changed"]
    assert block_changes(DOC, "# Skill\n") == ["protected block 'slow-update' was removed"]
    added = write_block(DOC, "other", "x")
    assert block_changes(DOC, added) == ["protected block 'other' was added"]


def test_block_changes_name_a_marker_the_rewrite_left_unpaired():
    from core.skill.protected_blocks import block_changes

    half = DOC + "\n<!-- skillopt:execution-notes:start -->\nA note.\n"
    assert block_changes(DOC, half) == [
        "protected block 'execution-notes' has a start marker without an end"
    ]


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        (
            "<!-- skillopt:slow-update:start -->\nGuide.\n<!-- skillopt:slow-update:end -->",
            "Guide.",
        ),
        ("<!-- skill<!-- skillopt:a:end -->opt:b:start --> Guide.", "Guide."),  # one hid another
        ("No markers here.", "No markers here."),
    ],
)
def test_strip_markers_leaves_no_marker_even_one_formed_by_stripping(reply, kept):
    from core.skill.protected_blocks import MARKER, strip_markers

    assert strip_markers(reply) == kept and not MARKER.search(strip_markers(reply))


def test_put_back_blocks_restores_changed_removed_and_drops_made_up_blocks():
    from core.skill.protected_blocks import block_changes, put_back_blocks

    changed = DOC.replace("Rule one.", "Rule two.").replace("Guidance.", "Guidance, rewritten.")
    restored = put_back_blocks(DOC, changed)
    assert block_changes(DOC, changed) and block_changes(DOC, restored) == []
    assert "Rule two." in restored and "rewritten" not in restored
    removed = put_back_blocks(DOC, "# Skill\n\nRule two.\n")
    assert block_changes(DOC, removed) == [] and removed.startswith("# Skill\n\nRule two.\n")
    made_up = (
        "# Skill\n<!-- skillopt:x:start -->\nmine\n<!-- skillopt:x:end -->\n<!-- skillopt:y:end -->"
    )
    assert block_changes(DOC, put_back_blocks(DOC, made_up)) == []
