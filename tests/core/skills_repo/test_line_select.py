"""Line-level adopt: the pure rebuild from chosen +/- lines, its syntax, and `adopt(lines=)`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.skills_repo import SkillsRepo, SkillsRepoError
from core.skills_repo.hunks import apply_hunks, net_hunks
from core.skills_repo.line_select import (
    apply_selection,
    blocks,
    change_count,
    format_lines,
    parse_lines,
    whole_and_partial,
)
from core.skills_repo.types import Hunk
from tests.support.skills_git import BASE_TEXT, SKILL


def _hunks(repo: SkillsRepo, base: bytes, head: bytes) -> list[Hunk]:
    b = repo.commit_tree(repo.tree_with(None, {"f.md": base}), [], "base\n")
    h = repo.commit_tree(repo.tree_with(b, {"f.md": head}), [b], "head\n")
    return net_hunks(repo.git, b, h, "f.md")


@pytest.fixture
def bare(tmp_path: Path) -> SkillsRepo:
    return SkillsRepo.init(tmp_path / "lines")


def test_hand_made_hunk_chooses_single_lines():
    base = b"a\nb\nc\n"
    head = b"a\nB\nc\nd\n"
    hunk = Hunk(1, "f", "@@ -1,3 +1,4 @@", [" a", "-b", "+B", " c", "+d"], 2, 1, 1, 3, 1, 4)
    assert change_count(hunk) == 3
    assert blocks(hunk) == [frozenset({1, 2}), frozenset({3})]
    assert apply_selection(base, head, [hunk], {1: {1, 2, 3}}) == head
    assert apply_selection(base, head, [hunk], {1: {3}}) == b"a\nb\nc\nd\n"
    assert apply_selection(base, head, [hunk], {1: {1}}) == b"a\nc\n"  # removal only
    assert apply_selection(base, head, [hunk], {1: {2}}) == b"a\nb\nB\nc\n"  # addition only
    assert apply_selection(base, head, [hunk], {}) == base


def test_crlf_endings_survive_a_partial_choice(bare):
    base = b"one\r\ntwo\r\nthree\r\n"
    head = b"one\r\nTWO\r\nthree\r\nfour\r\n"
    [hunk] = _hunks(bare, base, head)
    assert hunk.lines == [" one", "-two", "+TWO", " three", "+four"]
    assert apply_selection(base, head, [hunk], {1: {3}}) == b"one\r\ntwo\r\nthree\r\nfour\r\n"
    assert apply_selection(base, head, [hunk], {1: {1, 2}}) == b"one\r\nTWO\r\nthree\r\n"


def test_no_final_newline_kept_line_gets_the_files_ending(bare):
    """The old last line had no newline; keeping it and adding a line after it needs one."""
    base = b"x\r\nlast"
    head = b"x\r\nlast\r\nnew"
    [hunk] = _hunks(bare, base, head)
    assert hunk.lines == [
        " x",
        "-last",
        "\\ No newline at end of file",
        "+last",
        "+new",
        "\\ No newline at end of file",
    ]
    # only "+new": the old last line stays (gets CRLF, the file's ending), new one is added
    assert apply_selection(base, head, [hunk], {1: {3}}) == b"x\r\nlast\r\nnew"
    # only the line-ending fix of the old last line, not the new line
    assert apply_selection(base, head, [hunk], {1: {1, 2}}) == b"x\r\nlast\r\n"
    assert apply_selection(base, head, [hunk], {1: {1, 2, 3}}) == head


def test_no_final_newline_in_lf_file(bare):
    base = b"a\nb"
    head = b"a\nc\n"
    [hunk] = _hunks(bare, base, head)
    assert [line[:1] for line in hunk.lines] == [" ", "-", "\\", "+"]
    assert apply_selection(base, head, [hunk], {1: {2}}) == b"a\nb\nc\n"
    assert apply_selection(base, head, [hunk], {1: {1}}) == b"a\n"


_line = st.sampled_from(["a", "b", "c", "dd", "", "é"])
_ending = st.sampled_from(["\n", "\r\n"])
_text = st.builds(
    lambda lines, tail: "".join(lines) + tail,
    st.lists(st.builds(str.__add__, _line, _ending), max_size=20),
    st.sampled_from(["", "tail"]),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(base=_text, head=_text, pick=st.sets(st.integers(1, 6)))
def test_every_line_of_a_hunk_is_the_hunk(bare, base: str, head: str, pick: set[int]):
    hunks = _hunks(bare, base.encode(), head.encode())
    chosen = pick & {h.index for h in hunks}
    selection = {h.index: range(1, change_count(h) + 1) for h in hunks if h.index in chosen}
    expected = apply_hunks(base.encode(), head.encode(), hunks, chosen)
    assert apply_selection(base.encode(), head.encode(), hunks, selection) == expected
    # the blocks `s` splits a hunk into, all chosen, are the whole hunk too
    by_blocks = {h.index: set().union(*blocks(h)) for h in hunks if h.index in chosen}
    assert apply_selection(base.encode(), head.encode(), hunks, by_blocks) == expected


def test_syntax_round_trip_and_errors():
    assert parse_lines("2:3-5,7") == {2: frozenset({3, 4, 5, 7})}
    assert parse_lines("2:3-5,7 4:1;5:2") == {
        2: frozenset({3, 4, 5, 7}),
        4: frozenset({1}),
        5: frozenset({2}),
    }
    assert format_lines({2: {3, 4, 5, 7}, 4: {1}}) == "2:3-5,7 4:1"
    for bad in ("", "2", "2:", "x:1", "2:5-3", "2:0", "2:a"):
        with pytest.raises(ValueError):
            parse_lines(bad)


def test_whole_and_partial():
    hunk = Hunk(1, "f", "@@", [" a", "-b", "+B"], 1, 1)
    other = Hunk(2, "f", "@@", ["+x", "+y"], 2, 0)
    assert whole_and_partial([hunk, other], {1: {1, 2}, 2: {2}}) == ([1], {2: frozenset({2})})


TWO_BLOCKS = BASE_TEXT.replace("line 2\n", "line 2, sharper\n").replace(
    "line 5\n", "line 5\nline 5b\n"
)


def test_adopt_by_lines_commits_exactly_those_lines(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r1", TWO_BLOCKS, subject="s", trailers={"Step": "1"})
    [hunk] = repo.diff("r1").hunks
    assert [line for line in hunk.lines if line[:1] in "+-"] == [
        "-line 2",
        "+line 2, sharper",
        "+line 5b",
    ]
    result = repo.adopt("r1", lines={1: {3}})
    assert repo.read_skill(SKILL) == BASE_TEXT.replace("line 5\n", "line 5\nline 5b\n")
    assert target.read_text() == repo.read_skill(SKILL)
    entry = repo.log(SKILL)[0]
    assert entry.trailers["Hunks"] == "1" and entry.trailers["Lines"] == "1:3"
    assert result.archived_as is None  # lines 1-2 still to review
    repo.adopt("r1", lines={1: {1, 2}})
    assert repo.read_skill(SKILL) == TWO_BLOCKS
    assert repo.log(SKILL)[0].trailers["Lines"] == "1:1-2"
    assert [b.name for b in repo.staged_branches()] == []  # main holds it all: archived


def test_every_line_is_recorded_as_the_whole_hunk(repo: SkillsRepo):
    repo.stage(SKILL, "r1", TWO_BLOCKS, subject="s", trailers={"Step": "1"})
    result = repo.adopt("r1", lines={1: {1, 2, 3}})
    assert repo.read_skill(SKILL) == TWO_BLOCKS
    assert "Lines" not in repo.log(SKILL)[0].trailers
    assert result.archived_as == "adopted/r1"


def test_adopt_by_lines_refuses_bad_numbers(repo: SkillsRepo):
    repo.stage(SKILL, "r1", TWO_BLOCKS, subject="s", trailers={"Step": "1"})
    with pytest.raises(SkillsRepoError, match="no changed line 4 in hunk 1.*1-3"):
        repo.adopt("r1", lines={1: {4}})
    with pytest.raises(SkillsRepoError, match="no hunk 2"):
        repo.adopt("r1", lines={2: {1}})
    with pytest.raises(SkillsRepoError, match="both whole and by lines"):
        repo.adopt("r1", [1], lines={1: {1}})
    assert repo.read_skill(SKILL) == BASE_TEXT
