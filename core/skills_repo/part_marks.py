"""Whether a part of a hunk (a block after a split, or a line selection) is on main or
conflicts with it, judged by its own lines rather than by its parent hunk.

The same test `adopt --lines` makes: the part alone applied to the base, merged onto main
as it is now. Merged text equal to main: the part is already there. Not clean: adopting
that part would be refused. Review asks for every block of every hunk (so a split knows at
once) and for the line selections it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.skills_repo.gitcmd import GitRunner
from core.skills_repo.hunks import merge3
from core.skills_repo.line_select import apply_selection, blocks, change_count
from core.skills_repo.types import Hunk

PartKey = tuple[int, frozenset[int]]  # (hunk index, its changed-line numbers in the part)


@dataclass(frozen=True)
class PartMark:
    on_main: bool = False
    conflicts: bool = False


def every_block(hunks: list[Hunk]) -> list[PartKey]:
    """The blocks `s` would split each hunk into (hunks of one block left out)."""
    keys = []
    for hunk in hunks:
        runs = blocks(hunk)
        if len(runs) > 1:
            keys += [(hunk.index, run) for run in runs]
    return keys


def mark_parts(
    git: GitRunner,
    base: bytes,
    head: bytes,
    main: bytes,
    hunks: list[Hunk],
    parts: Iterable[PartKey],
) -> dict[PartKey, PartMark]:
    """A mark for each part; parts naming no hunk or no changed line of it are skipped."""
    by_index = {h.index: h for h in hunks}
    marks: dict[PartKey, PartMark] = {}
    for index, lines in parts:
        hunk = by_index.get(index)
        if hunk is None or not lines or not lines <= set(range(1, change_count(hunk) + 1)):
            continue
        if main == base:  # main has not moved since staging: nothing is on it, nothing clashes
            marks[(index, lines)] = PartMark()
            continue
        theirs = apply_selection(base, head, hunks, {index: lines})
        merged, conflicts = merge3(git, main, base, theirs)
        marks[(index, lines)] = PartMark(not conflicts and merged == main, bool(conflicts))
    return marks
