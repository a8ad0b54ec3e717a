"""Protected blocks: regions of a skill that only their owning component may write.

A block is delimited by HTML comments (invisible when the Markdown is rendered):

    <!-- skillopt:slow-update:start -->
    guidance written by the slow update
    <!-- skillopt:slow-update:end -->

Ordinary optimizer edits must never rewrite an owner's text, so `span_touches_block`
answers "does this span overlap a block?" for the edit engine, and `write_block` is the
one sanctioned way in. Markers that are not properly paired are protected too (see
`protected_spans`): when the end marker is missing we cannot know where the owner's
text stops, so everything after the start marker is off limits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.skill.document import SkillError, detect_newline

SLOW_UPDATE_BLOCK = "slow-update"

BLOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
MARKER = re.compile(
    r"<!--[ \t]*skillopt:(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*):(?P<kind>start|end)[ \t]*-->"
)


def start_marker(name: str) -> str:
    return f"<!-- skillopt:{name}:start -->"


def end_marker(name: str) -> str:
    return f"<!-- skillopt:{name}:end -->"


@dataclass(frozen=True)
class ProtectedBlock:
    name: str
    start: int  # offset of the start marker's "<"
    end: int  # offset just past the end marker's "-->"
    content_start: int  # past the start marker and the line break that follows it
    content_end: int  # before the line break that precedes the end marker


@dataclass(frozen=True)
class Marker:
    name: str
    kind: str  # "start" | "end"
    start: int
    end: int


def strip_markers(text: str) -> str:
    """`text` without any block marker, stripped. Model replies echo markers (the skill they
    are shown has them); removal repeats until none is left, since removing one can join
    its neighbours into another ("<!-- skill" + marker + "opt:x:start -->")."""
    return _without_markers(text).strip()


def _without_markers(text: str) -> str:
    while True:
        stripped = MARKER.sub("", text)
        if stripped == text:
            return text
        text = stripped


def find_markers(text: str) -> list[Marker]:
    return [
        Marker(m.group("name"), m.group("kind"), m.start(), m.end()) for m in MARKER.finditer(text)
    ]


def _pair(text: str) -> tuple[list[ProtectedBlock], list[Marker]]:
    """Well-formed blocks, plus the markers that could not be paired."""
    blocks: list[ProtectedBlock] = []
    unpaired: list[Marker] = []
    open_: dict[str, Marker] = {}
    for marker in find_markers(text):
        if marker.kind == "start":
            if marker.name in open_:
                unpaired.append(marker)  # a second start before the first one's end
            else:
                open_[marker.name] = marker
            continue
        opener = open_.pop(marker.name, None)
        if opener is None:
            unpaired.append(marker)
            continue
        blocks.append(_block(text, opener, marker))
    unpaired.extend(open_.values())
    blocks.sort(key=lambda b: b.start)
    unpaired.sort(key=lambda m: m.start)
    return blocks, unpaired


def _block(text: str, opener: Marker, closer: Marker) -> ProtectedBlock:
    content_start = opener.end
    for brk in ("\r\n", "\n"):
        if text.startswith(brk, content_start) and content_start + len(brk) <= closer.start:
            content_start += len(brk)
            break
    content_end = closer.start
    for brk in ("\r\n", "\n"):
        if text.endswith(brk, content_start, content_end):
            content_end -= len(brk)
            break
    return ProtectedBlock(opener.name, opener.start, closer.end, content_start, content_end)


def find_blocks(text: str) -> list[ProtectedBlock]:
    """Properly paired blocks in document order (unpaired markers are left out)."""
    return _pair(text)[0]


def marker_problems(text: str) -> list[str]:
    """Why the markers are not balanced ([] when every block is opened, closed, unique)."""
    blocks, unpaired = _pair(text)
    problems = []
    for marker in unpaired:
        if marker.kind == "start":
            problems.append(f"protected block '{marker.name}' has a start marker without an end")
        else:
            problems.append(f"protected block '{marker.name}' has an end marker without a start")
    seen: set[str] = set()
    for block in blocks:
        if block.name in seen:
            problems.append(f"protected block '{block.name}' appears more than once")
        seen.add(block.name)
    for outer in blocks:
        for inner in blocks:
            if outer is not inner and outer.start < inner.start < outer.end:
                problems.append(f"protected block '{inner.name}' is inside '{outer.name}'")
    return problems


def read_block(text: str, name: str) -> str | None:
    """The block's content exactly as stored (line endings included), None if absent."""
    for block in find_blocks(text):
        if block.name == name:
            return text[block.content_start : block.content_end]
    return None


def protected_spans(text: str) -> list[tuple[ProtectedBlock, bool]]:
    """Every region an edit must not touch, with `open_ended` for a start without an end.

    An unpaired end marker protects only itself; an unpaired start marker protects the
    rest of the document.
    """
    blocks, unpaired = _pair(text)
    spans = [(block, False) for block in blocks]
    for marker in unpaired:
        if marker.kind == "start":
            spans.append(
                (ProtectedBlock(marker.name, marker.start, len(text), marker.end, len(text)), True)
            )
        else:
            spans.append(
                (
                    ProtectedBlock(marker.name, marker.start, marker.end, marker.end, marker.end),
                    False,
                )
            )
    return spans


def span_touches_block(text: str, start: int, end: int) -> ProtectedBlock | None:
    """The block a span overlaps, or None.

    A non-empty span [start, end) touches a block if the two overlap at all. An empty span
    is an insertion point: it touches a block only if strictly inside it, so inserting
    right before a start marker or right after an end marker is allowed.
    """
    for block, open_ended in protected_spans(text):
        if start == end:
            if block.start < start < block.end or (open_ended and start == block.end):
                return block
        elif start < block.end and end > block.start:
            return block
    return None


def write_block(text: str, name: str, content: str) -> str:
    """Set a block's content (the owner's write). Creates the block if it is absent.

    A new block goes at the end of the document, after a blank line; the document keeps
    its line-ending style and its trailing newline (or lack of one). Leading and trailing
    line breaks of `content` are dropped: the markers sit on their own lines anyway.
    Unbalanced markers of this block are the user's to fix (SkillError): writing would
    guess where the owner's text ends.
    """
    if not BLOCK_NAME.fullmatch(name):
        raise ValueError(f"invalid protected block name: {name!r}")
    if MARKER.search(content):
        raise ValueError("protected block content must not contain block markers")
    if any(marker.name == name for marker in _pair(text)[1]):
        raise SkillError(
            f"the skill's protected block '{name}' has unbalanced markers; fix or remove its "
            f"'{start_marker(name)}' / '{end_marker(name)}' lines"
        )
    nl = detect_newline(text)
    body = content.replace("\r\n", "\n").strip("\n").replace("\n", nl)
    rendered = start_marker(name) + nl + (body + nl if body else "") + end_marker(name)
    for block in find_blocks(text):
        if block.name == name:
            return text[: block.start] + rendered + text[block.end :]
    if not text:
        return rendered + nl
    head = text.rstrip("\r\n")
    tail = nl if text.endswith("\n") else ""
    if not head:
        return rendered + tail
    return head + nl + nl + rendered + tail


def block_changes(before: str, after: str) -> list[str]:
    """How `after` altered the protected blocks of `before` ([] when each is byte-identical
    and none was added): a whole-skill rewrite must leave every owner's text alone."""
    old = {b.name: before[b.start : b.end] for b in find_blocks(before)}
    new = {b.name: after[b.start : b.end] for b in find_blocks(after)}
    problems = []
    for name, text in old.items():
        if name not in new:
            problems.append(f"protected block '{name}' was removed")
        elif new[name] != text:
            problems.append(f"protected block '{name}' was changed")
    problems.extend(f"protected block '{name}' was added" for name in new if name not in old)
    known = set(marker_problems(before))  # an unpaired marker the rewrite made up
    problems.extend(p for p in marker_problems(after) if p not in known)
    return problems


def put_back_blocks(before: str, after: str) -> str:
    """`after` (a whole-skill rewrite of `before`) with every protected block of `before`
    byte for byte: a changed block is restored in place, a removed one re-added at the end,
    and blocks or markers `before` did not have are dropped. As published, the rest of the
    rewrite is kept: only the owners' text is not the rewriter's to change."""
    old = {b.name: before[b.start : b.end] for b in find_blocks(before)}
    out, at, kept = [], 0, set()
    for block in find_blocks(after):
        out.append(_without_markers(after[at : block.start]))
        if block.name in old and block.name not in kept:
            out.append(old[block.name])
            kept.add(block.name)
        at = block.end
    out.append(_without_markers(after[at:]))
    text = "".join(out)
    nl = detect_newline(before)
    for name, block in old.items():
        if name not in kept:
            tail = nl if text.endswith("\n") else ""
            text = text.rstrip("\r\n") + nl + nl + block + tail
    return text
