"""What a reviewer decided about one staged branch, kept for the session (no Textual here).

The list the reviewer walks is made of items: a whole hunk, or after `s` one block of a
split hunk. Each item is pending, approved or rejected, or partly chosen by line (space /
`v`). `selection()` turns the items into what `SkillsRepo.adopt(hunks, lines=)` takes, so
the TUI adopts through the same call as `skillopt skills adopt --hunks … --lines …`.

States are kept per branch and head in `ReviewStates` (one per app): switching branches or
leaving Review loses nothing; a branch whose head moved starts afresh, and says so.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from core.skills_repo.line_select import blocks, change_count, format_hunks, format_lines

UNDO_DEPTH = 100


@dataclass
class Item:
    hunk: Any  # core.skills_repo.Hunk
    lines: frozenset[int]  # the hunk's changed-line numbers this item covers
    part: int = 0  # 0: the whole hunk; 1, 2, …: a part (a block after a split, or lines)
    parts: int = 1
    decision: str = "pending"  # pending / approved / rejected / partial / adopted
    chosen: set[int] = field(default_factory=set)  # with "partial": the lines chosen
    mark: Any = None  # a part's own PartMark (on main / conflicts), judged by its lines

    @property
    def label(self) -> str:
        return f"#{self.hunk.index}" + (f".{self.part}" if self.part else "")

    @property
    def key(self) -> tuple[int, frozenset[int]]:
        return (self.hunk.index, self.lines)

    @property
    def on_main(self) -> bool:
        if not self.part:
            return bool(getattr(self.hunk, "on_main", False))
        return bool(getattr(self.mark, "on_main", False))

    @property
    def conflicts(self) -> bool:
        """Adopting this item's own lines alone would not merge with main as it is now."""
        if not self.part:
            return bool(getattr(self.hunk, "conflicts", False))
        return bool(getattr(self.mark, "conflicts", False))

    @property
    def decided(self) -> bool:
        return self.decision != "pending"

    def chosen_lines(self) -> set[int]:
        if self.decision == "approved":
            return set(self.lines)
        return set(self.chosen) if self.decision == "partial" else set()


def _whole(hunk: Any) -> Item:
    item = Item(hunk, frozenset(range(1, change_count(hunk) + 1)))
    item.decision = "adopted" if item.on_main else "pending"
    return item


@dataclass
class ReviewState:
    branch: str
    head: str
    items: list[Item]
    current: int = 0
    line_cursor: int | None = None  # a changed-line number while choosing lines
    anchor: int | None = None  # where `v` started a range
    undo_stack: list[tuple[list[Item], int]] = field(default_factory=list)
    marks: dict = field(default_factory=dict)  # (hunk, lines) → PartMark, from the repo

    @classmethod
    def fresh(cls, diff: Any, marks: dict | None = None) -> ReviewState:
        return cls(diff.branch, diff.head, [_whole(h) for h in diff.hunks], marks=marks or {})

    def part_keys(self) -> list[tuple[int, frozenset[int]]]:
        """The parts this review holds, for the repo to mark (blocks it marks anyway)."""
        return [item.key for item in self.items if item.part]

    def refresh(self, diff: Any, marks: dict | None = None) -> list[str]:
        """The same branch and head, reloaded (after an adopt here, a rollback in History or
        a change made outside the TUI): keep every decision, but "adopted" is what main
        holds now, recomputed, never remembered. Returns the labels of the items main no
        longer holds (rolled back): pending again."""
        by_index = {h.index: h for h in diff.hunks}
        self.marks = marks or {}
        reopened = []
        for item in self.items:
            item.hunk = by_index.get(item.hunk.index, item.hunk)
            item.mark = self.marks.get(item.key)
            if item.on_main:
                item.decision, item.chosen = "adopted", set()
            elif item.decision == "adopted":
                item.decision = "pending"
                reopened.append(item.label)
        if reopened:
            self.undo_stack.clear()  # an undo must not bring back a mark main lost
        return reopened

    # -- the cursor ------------------------------------------------------------------------

    @property
    def item(self) -> Item | None:
        return self.items[self.current] if self.items else None

    def move(self, delta: int) -> None:
        if self.items:
            self.current = max(0, min(len(self.items) - 1, self.current + delta))
            self.leave_lines()

    def next_undecided(self, delta: int) -> bool:
        n = len(self.items)
        for step in range(1, n + 1):
            pos = self.current + delta * step
            if not 0 <= pos < n:
                return False
            if not self.items[pos].decided:
                self.current = pos
                self.leave_lines()
                return True
        return False

    def find(self, needle: str, delta: int = 1) -> bool:
        """Moves to the next item (wrapping) whose header or lines contain `needle`."""
        needle = needle.lower()
        n = len(self.items)
        for step in range(1, n + 1):
            pos = (self.current + delta * step) % n
            hunk = self.items[pos].hunk
            if needle in hunk.header.lower() or any(needle in x.lower() for x in hunk.lines):
                self.current = pos
                self.leave_lines()
                return True
        return False

    # -- decisions -------------------------------------------------------------------------

    def _remember(self) -> None:
        self.undo_stack.append((copy.deepcopy(self.items), self.current))
        del self.undo_stack[:-UNDO_DEPTH]

    def undo(self) -> bool:
        if not self.undo_stack:
            return False
        self.items, self.current = self.undo_stack.pop()
        self.leave_lines()
        return True

    def decide(self, decision: str) -> bool:
        """Marks the current item; False (nothing changed) when it is already on main."""
        item = self.item
        if item is None or item.decision == "adopted":
            return False
        self._remember()
        item.decision, item.chosen = decision, set()
        return True

    def approve_all(self) -> int:
        self._remember()
        count = 0
        for item in self.items:
            if item.decision not in ("adopted",) and not item.conflicts:
                item.decision, item.chosen = "approved", set()
                count += 1
        return count

    def split(self) -> int:
        """Splits the current whole hunk into its blocks; the number of items it became
        (1: nothing to split)."""
        item = self.item
        if item is None or item.part or item.decision == "adopted":
            return 1
        runs = blocks(item.hunk)
        if len(runs) < 2:
            return 1
        self._remember()
        pieces = [
            Item(
                item.hunk,
                run,
                part=i + 1,
                parts=len(runs),
                decision=item.decision,
                mark=self.marks.get((item.hunk.index, run)),
            )
            for i, run in enumerate(runs)
        ]
        for piece in pieces:  # a block main already holds is shown so, whatever the parent
            if piece.on_main:
                piece.decision = "adopted"
        if item.decision == "partial":
            for piece in pieces:
                if piece.decision != "adopted":
                    piece.chosen = item.chosen & piece.lines
                    piece.decision = _from_lines(piece.chosen, piece.lines)
        self.items[self.current : self.current + 1] = pieces
        return len(pieces)

    # -- choosing lines ----------------------------------------------------------------------

    def enter_lines(self) -> bool:
        item = self.item
        if item is None or item.decision == "adopted":
            return False
        self.line_cursor, self.anchor = min(item.lines), None
        return True

    def leave_lines(self) -> None:
        self.line_cursor = self.anchor = None

    def move_line(self, delta: int) -> None:
        item = self.item
        if item is None or self.line_cursor is None:
            return
        ordered = sorted(item.lines)
        pos = ordered.index(self.line_cursor) + delta
        self.line_cursor = ordered[max(0, min(len(ordered) - 1, pos))]

    def toggle_range(self) -> None:
        """`v`: start a range at the line cursor, or end it (toggling every line in it)."""
        if self.line_cursor is None:
            return
        if self.anchor is None:
            self.anchor = self.line_cursor
            return
        lo, hi = sorted((self.anchor, self.line_cursor))
        self.anchor = None
        self.toggle(set(range(lo, hi + 1)))

    def toggle(self, numbers: set[int] | None = None) -> None:
        """Space: flips the chosen state of the line under the cursor (or of `numbers`):
        all of them chosen if any was not, else none."""
        item = self.item
        if item is None or self.line_cursor is None:
            return
        numbers = (numbers or {self.line_cursor}) & set(item.lines)
        self._remember()
        chosen = item.chosen_lines()
        chosen = chosen - numbers if numbers <= chosen else chosen | numbers
        item.chosen = chosen
        item.decision = _from_lines(chosen, item.lines)

    # -- what adopt gets -----------------------------------------------------------------------

    def selection(self) -> tuple[list[int], dict[int, frozenset[int]]]:
        """(hunks chosen whole, {hunk: chosen changed lines} for hunks chosen in part),
        leaving out hunks that conflict with main."""
        by_hunk: dict[int, set[int]] = {}
        totals: dict[int, int] = {}
        for item in self.items:
            if item.decision == "adopted" or item.conflicts:
                continue
            totals[item.hunk.index] = change_count(item.hunk)
            by_hunk.setdefault(item.hunk.index, set()).update(item.chosen_lines())
        whole = sorted(i for i, lines in by_hunk.items() if len(lines) == totals[i])
        partial = {i: frozenset(v) for i, v in sorted(by_hunk.items()) if v and i not in whole}
        return whole, partial

    def cli_args(self) -> str:
        """The `skillopt skills adopt` options that adopt the same lines."""
        whole, partial = self.selection()
        args = []
        if whole:
            args.append(f"--hunks {format_hunks(whole)}")
        args += [f"--lines {group}" for group in format_lines(partial).split()]
        return " ".join(args)

    def mark_adopted(self) -> None:
        """After an adoption: what was chosen is on main now; rejections stay. Lines chosen
        in part become a part of their own (on main), the rest another (to review), so
        each is judged by its own lines from now on."""
        items: list[Item] = []
        for item in self.items:
            if item.decision == "approved" and not item.conflicts:
                item.decision = "adopted"
            if item.decision != "partial" or item.conflicts:
                items.append(item)
                continue
            rest = item.lines - item.chosen
            items.append(replace(item, lines=frozenset(item.chosen), decision="adopted"))
            items.append(replace(item, lines=rest, decision="pending", chosen=set()))
        self.items = _numbered(items)
        self.current = min(self.current, len(self.items) - 1)
        self.undo_stack.clear()

    def counts(self) -> dict[str, int]:
        out = {"pending": 0, "approved": 0, "rejected": 0, "partial": 0, "adopted": 0}
        for item in self.items:
            out[item.decision] += 1
        return out


def _numbered(items: list[Item]) -> list[Item]:
    """Parts numbered 1, 2, … within their hunk again (after a part became two)."""
    counts: dict[int, int] = {}
    for item in items:
        counts[item.hunk.index] = counts.get(item.hunk.index, 0) + 1
    seen: dict[int, int] = {}
    for item in items:
        index = item.hunk.index
        if counts[index] > 1:
            seen[index] = seen.get(index, 0) + 1
            item.part, item.parts = seen[index], counts[index]
    return items


def _from_lines(chosen: set[int], lines: frozenset[int]) -> str:
    if not chosen:
        return "rejected"
    return "approved" if chosen >= lines else "partial"


class ReviewStates:
    """Every branch's review for this session, keyed by branch; a moved head starts over."""

    def __init__(self) -> None:
        self._states: dict[str, ReviewState] = {}

    def part_keys(self, branch: str) -> list[tuple[int, frozenset[int]]]:
        known = self._states.get(branch)
        return known.part_keys() if known is not None else []

    def for_diff(self, diff: Any, marks: dict | None = None) -> tuple[ReviewState, str]:
        """(the state, news for the status line: earlier decisions dropped because the
        branch moved, or hunks reopened because main no longer holds them; else "")."""
        known = self._states.get(diff.branch)
        if known is not None and known.head == diff.head:
            reopened = known.refresh(diff, marks)
            if not reopened:
                return known, ""
            names = ", ".join(reopened)
            return known, f"{names} no longer on main (rolled back?): to review again"
        state = ReviewState.fresh(diff, marks)
        self._states[diff.branch] = state
        if known is not None and any(i.decided for i in known.items):
            return state, "the branch changed since you reviewed it: decisions start afresh"
        return state, ""
