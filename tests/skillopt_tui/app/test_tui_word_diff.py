"""Word-level highlighting inside changed lines."""

from __future__ import annotations

from skillopt_tui.app.widgets.word_diff import ADDED_WORD, REMOVED_WORD, styled_lines, word_spans


def test_only_the_changed_words_are_marked():
    after = "Answer exactly the question asked."
    old, new = word_spans("Answer the question asked.", after)
    assert old == []
    assert [after[a:b] for a, b in new] == [" exactly"]  # the word and the space it brought


def test_paired_lines_carry_word_styles_and_context_stays_plain():
    lines = [" # Skill", "-- Do not guess.", "+- Do not guess; say so.", " tail"]
    texts = styled_lines(lines)
    assert [t.plain for t in texts] == lines
    removed, added = texts[1], texts[2]
    # the final "." is kept on both sides; only "; say so" is new
    assert [s for s in removed.spans if s.style == REMOVED_WORD] == []
    assert [added.plain[s.start : s.end] for s in added.spans if s.style == ADDED_WORD] == [
        "; say so"
    ]
    assert texts[0].spans == [] and texts[3].spans == []


def test_a_replaced_word_is_marked_on_both_sides():
    texts = styled_lines(["-- Keep answers short.", "+- Keep answers brief."])
    assert [texts[0].plain[s.start : s.end] for s in texts[0].spans if s.style == REMOVED_WORD] == [
        "short"
    ]
    assert [texts[1].plain[s.start : s.end] for s in texts[1].spans if s.style == ADDED_WORD] == [
        "brief"
    ]


def test_unpaired_additions_are_whole_line_green():
    texts = styled_lines(["+new line", "+another"])
    assert all(not t.spans and t.style == "green" for t in texts)
