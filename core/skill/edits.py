"""Bounded edits to a skill document (DESIGN §3).

Types are fixed here; the application logic (target matching, protected blocks,
statuses) lives below them.

Two ways to find a target (`train.optimizer.edit_targets`):
- first (published): the exact text, its first occurrence; an `insert_after` whose target
  is missing appends its content instead, a `replace`/`delete` whose target is missing
  changes nothing. With the `published` layout (training's default) each edit is laid out
  as published lays it out, blank lines and all (tests/core/published/
  test_edits_differential.py proves it against the published package, character for
  character); the `tidy` layout follows the placement rules below.
- strict (overlay strict_edit_targets): exact, then whitespace-normalised; a target found
  in more than one place is refused as ambiguous and a missing one is dropped, so an edit
  never lands anywhere but where its author quoted; always the `tidy` layout.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Literal

from core.skill.document import SkillDocument, SkillError, detect_newline
from core.skill.protected_blocks import MARKER, find_blocks, find_markers, span_touches_block

EDIT_OPS: tuple[str, ...] = ("insert_after", "append", "replace", "delete")
TargetMatching = Literal["first", "strict"]
# How an edit is laid out: `tidy`, our placement rules (below); `published`, as published
# apply_patch does it (`_published_layout`; training's default, with `first` matching).
Layout = Literal["tidy", "published"]


@dataclass(frozen=True)
class Edit:
    op: str  # one of EDIT_OPS; anything else is reported as `invalid`, not raised
    target: str = ""  # exact text from the skill ("" for append)
    content: str = ""
    rationale: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edit:
        return cls(
            op=str(data.get("op", "")),
            target=str(data.get("target", "") or ""),
            content=str(data.get("content", "") or ""),
            rationale=str(data.get("rationale", "") or ""),
        )


class EditStatus(str, Enum):  # noqa: UP042 - kept as the lead defined it
    APPLIED = "applied"
    TARGET_NOT_FOUND = "target_not_found"
    AMBIGUOUS = "ambiguous"
    PROTECTED = "protected"
    INVALID = "invalid"


@dataclass(frozen=True)
class EditOutcome:
    edit: Edit
    status: EditStatus
    reason: str = ""


@dataclass(frozen=True)
class ApplyReport:
    outcomes: tuple[EditOutcome, ...]

    @property
    def applied(self) -> int:
        return sum(o.status is EditStatus.APPLIED for o in self.outcomes)

    def unmatched(self) -> list[EditOutcome]:
        return [o for o in self.outcomes if o.status is not EditStatus.APPLIED]

    def to_dict(self) -> list[dict[str, Any]]:
        return [
            {**o.edit.to_dict(), "status": o.status.value, "reason": o.reason}
            for o in self.outcomes
        ]


# --- application ----------------------------------------------------------------------
#
# Placement rules of the `tidy` layout (the published one is `_published_layout`):
# - insert_after: the content goes on its own line(s) after the line where the target
#   ends (right after the target when the target itself ends with a line break).
# - append: the content goes at the end of the body, but before a run of protected blocks
#   that ends the document, so owner-written guidance (e.g. slow update) stays last.
# - replace: the matched span becomes the content; an empty content behaves like delete.
# - delete: the matched span is removed; a target that is a whole line takes its line
#   break with it, and blank lines left at the seam are tidied to at most one.
# Content is converted to the document's line endings. A document with no trailing newline
# keeps having none.

_TARGET_OPS = ("insert_after", "replace", "delete")
_WS_RUN = re.compile(r"\s+")
_PREFIX_CHARS = 60


def apply_edit(
    text: str, edit: Edit, matching: TargetMatching = "first", layout: Layout = "tidy"
) -> tuple[str, EditOutcome]:
    """Apply one edit; on any status but `applied` the text is returned unchanged."""
    try:
        new_text = _apply(text, edit, matching, layout)
    except _Refusal as refusal:
        return text, EditOutcome(edit, refusal.status, refusal.reason)
    return new_text, EditOutcome(edit, EditStatus.APPLIED)


def apply_edits(
    text: str, edits: list[Edit], matching: TargetMatching = "first", layout: Layout = "tidy"
) -> tuple[str, ApplyReport]:
    """Apply edits in order, each to the result of the previous one."""
    outcomes = []
    for edit in edits:
        text, outcome = apply_edit(text, edit, matching, layout)
        outcomes.append(outcome)
    return text, ApplyReport(tuple(outcomes))


class _Refusal(Exception):
    def __init__(self, status: EditStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _apply(text: str, edit: Edit, matching: TargetMatching, layout: Layout) -> str:
    _check_shape(edit, matching)
    nl = detect_newline(text)
    if layout == "published" and matching == "first":
        start, end, insertion = _published_layout(text, edit, nl)
        _refuse_if_protected(text, start, end)
        return _check_result(text, text[:start] + insertion + text[end:])
    if edit.op == "append" or _appends_instead(text, edit, matching):
        start, end, insertion = _append(text, edit.content, nl)
    else:
        start, end = _locate(text, edit.target) if matching == "strict" else _first(text, edit)
        if edit.op == "insert_after":
            start, end, insertion = _insert_after(text, end, edit.content, nl)
        elif edit.op == "replace" and edit.content:
            insertion = _convert_newlines(edit.content, nl)
        else:  # delete, or replace with nothing
            start, end = _whole_line(text, start, end, edit.target)
            _refuse_if_protected(text, start, end)
            return _check_result(text, _delete(text, start, end))
    _refuse_if_protected(text, start, end)
    return _check_result(text, text[:start] + insertion + text[end:])


def _appends_instead(text: str, edit: Edit, matching: TargetMatching) -> bool:
    """Published: an insert_after whose target is not in the skill appends its content."""
    return (
        matching == "first"
        and edit.op == "insert_after"
        and (not edit.target or edit.target not in text)
    )


def _published_layout(text: str, edit: Edit, nl: str) -> tuple[int, int, str]:
    """(start, end, insertion) as published `apply_patch` lays an edit out: the content
    stripped; `append` (and an `insert_after` whose target is missing) after the body with
    its trailing whitespace dropped, a blank line before the content (and after it, before
    a trailing run of protected blocks); `insert_after` on the line after the target's line
    with a blank line before the content; `replace` / `delete` the first exact occurrence,
    nothing tidied around it. One published quirk is not copied: a target ending with a
    line break inserts right after it (published: after the following line)."""
    content = _convert_newlines(edit.content.strip(), nl)
    if edit.op == "append" or _appends_instead(text, edit, "first"):
        point = _append_point(text)
        body_end = len(text[:point].rstrip())
        tail = nl if point == len(text) else nl + nl
        return body_end, point, nl + nl + content + tail
    start, end = _first(text, edit)
    if edit.op == "insert_after":
        point = _line_after(text, end)
        return point, point, nl + content + nl
    return start, end, content if edit.op == "replace" else ""


def _first(text: str, edit: Edit) -> tuple[int, int]:
    """The target's first exact occurrence (published)."""
    at = text.find(edit.target)
    if at == -1:
        raise _Refusal(
            EditStatus.TARGET_NOT_FOUND, f"target not found in the skill: {_prefix(edit.target)}"
        )
    return at, at + len(edit.target)


def _check_shape(edit: Edit, matching: TargetMatching) -> None:
    for name in ("op", "target", "content", "rationale"):
        value = getattr(edit, name)
        if not isinstance(value, str):
            raise _Refusal(
                EditStatus.INVALID, f"field '{name}' must be a string, got {type(value).__name__}"
            )
    if edit.op not in EDIT_OPS:
        raise _Refusal(
            EditStatus.INVALID, f"unknown op {edit.op!r}; use one of {', '.join(EDIT_OPS)}"
        )
    needs_target = _TARGET_OPS if matching == "strict" else ("replace", "delete")
    if edit.op in needs_target and not (
        edit.target.strip() if matching == "strict" else edit.target
    ):
        raise _Refusal(
            EditStatus.INVALID, f"{edit.op} needs a non-empty target quoted from the skill"
        )
    if edit.op in ("insert_after", "append") and not edit.content.strip():
        raise _Refusal(EditStatus.INVALID, f"{edit.op} needs non-empty content")
    if MARKER.search(edit.content):
        raise _Refusal(
            EditStatus.PROTECTED,
            "content contains a protected-block marker; only the block's owner writes those",
        )


def _locate(text: str, target: str) -> tuple[int, int]:
    """The single span the target refers to: exact match first, then whitespace-normalised."""
    exact = _find_all(text, target)
    if len(exact) == 1:
        return exact[0], exact[0] + len(target)
    if len(exact) > 1:
        raise _Refusal(EditStatus.AMBIGUOUS, _ambiguous(len(exact)))
    needle = _WS_RUN.sub(" ", target).strip()
    haystack, origin = _normalise(text)
    loose = _find_all(haystack, needle)
    if len(loose) == 1:
        i = loose[0]
        # `needle` starts and ends with non-whitespace, which maps to exactly one character.
        return origin[i], origin[i + len(needle) - 1] + 1
    if len(loose) > 1:
        raise _Refusal(
            EditStatus.AMBIGUOUS, _ambiguous(len(loose)) + " (after whitespace normalisation)"
        )
    raise _Refusal(EditStatus.TARGET_NOT_FOUND, f"target not found in the skill: {_prefix(target)}")


def _find_all(haystack: str, needle: str) -> list[int]:
    found = []
    i = haystack.find(needle)
    while i != -1:
        found.append(i)
        i = haystack.find(needle, i + 1)
    return found


def _normalise(text: str) -> tuple[str, list[int]]:
    """Text with each whitespace run as one space, and each character's original offset."""
    chars: list[str] = []
    origin: list[int] = []
    pos = 0
    for run in _WS_RUN.finditer(text):
        chars.extend(text[pos : run.start()])
        origin.extend(range(pos, run.start()))
        chars.append(" ")
        origin.append(run.start())
        pos = run.end()
    chars.extend(text[pos:])
    origin.extend(range(pos, len(text)))
    return "".join(chars), origin


def _ambiguous(count: int) -> str:
    return f"target matches {count} places; quote more surrounding text so it matches exactly one"


def _prefix(target: str) -> str:
    flat = _WS_RUN.sub(" ", target).strip()
    return repr(flat if len(flat) <= _PREFIX_CHARS else flat[:_PREFIX_CHARS] + "…")


def _convert_newlines(content: str, nl: str) -> str:
    return content.replace("\r\n", "\n").replace("\n", nl)


def _as_lines(text: str, at: int, content: str, nl: str) -> str:
    """`content` shaped to sit on its own lines when inserted into `text` at `at`."""
    content = _convert_newlines(content, nl)
    if at == len(text) and text and not text.endswith("\n"):
        # End of a document without a trailing newline: start a new line, add none at the end.
        return nl + _strip_trailing_breaks(content)
    return content if content.endswith("\n") else content + nl


def _strip_trailing_breaks(s: str) -> str:
    return s.rstrip("\r\n")


def _line_after(text: str, target_end: int) -> int:
    """Where the line after the target's line starts (right after a target ending with a
    line break; the end of a document without a final one)."""
    if target_end > 0 and text[target_end - 1] == "\n":
        return target_end
    line_break = text.find("\n", target_end)
    return len(text) if line_break == -1 else line_break + 1


def _insert_after(text: str, target_end: int, content: str, nl: str) -> tuple[int, int, str]:
    point = _line_after(text, target_end)
    return point, point, _as_lines(text, point, content, nl)


def _append_point(text: str) -> int:
    """The end of the body: before a run of protected blocks that ends the document."""
    point = len(text)
    for block in reversed(find_blocks(text)):
        if text[block.end : point].strip():
            break
        point = block.start
    return point


def _append(text: str, content: str, nl: str) -> tuple[int, int, str]:
    point = _append_point(text)
    if point == len(text):
        return point, point, _as_lines(text, point, content, nl)
    # Before a trailing run of protected blocks: keep a blank line between content and block.
    lead = "" if point == 0 or text[:point].endswith("\n") else nl
    return point, point, lead + _as_lines(text, point, content, nl) + nl


def _whole_line(text: str, start: int, end: int, target: str) -> tuple[int, int]:
    """Widen a deletion of a whole line to take its line break too."""
    at_line_start = start == 0 or text[start - 1] == "\n"
    if not at_line_start or target.endswith("\n"):
        return start, end
    for brk in ("\r\n", "\n"):
        if text.startswith(brk, end):
            return start, end + len(brk)
    if end == len(text) and start > 0:
        # The last line of a document without a trailing newline: drop the break before it.
        return start - (2 if text.endswith("\r\n", 0, start) else 1), end
    return start, end


def _delete(text: str, start: int, end: int) -> str:
    """Remove [start, end) and tidy blank lines the removal piles up at the seam."""
    left, right = text[:start], text[end:]
    left_breaks = _count_breaks(left, from_end=True)
    right_breaks = _count_breaks(right, from_end=False)
    allowed = max(2, left_breaks, right_breaks)  # never tidy what was already there
    excess = left_breaks + right_breaks - allowed
    while excess > 0 and right_breaks > 0:
        right = right[2:] if right.startswith("\r\n") else right[1:]
        right_breaks -= 1
        excess -= 1
    while excess > 0 and left_breaks > 0:
        left = left[:-2] if left.endswith("\r\n") else left[:-1]
        left_breaks -= 1
        excess -= 1
    return left + right


def _count_breaks(s: str, *, from_end: bool) -> int:
    count = 0
    while s:
        if from_end:
            brk = "\r\n" if s.endswith("\r\n") else "\n" if s.endswith("\n") else ""
            s = s[: len(s) - len(brk)]
        else:
            brk = "\r\n" if s.startswith("\r\n") else "\n" if s.startswith("\n") else ""
            s = s[len(brk) :]
        if not brk:
            break
        count += 1
    return count


def _refuse_if_protected(text: str, start: int, end: int) -> None:
    block = span_touches_block(text, start, end)
    if block is not None:
        where = "inserts into" if start == end else "touches"
        raise _Refusal(
            EditStatus.PROTECTED,
            f"edit {where} the protected block '{block.name}', which only its owner may change",
        )


def _check_result(before: str, after: str) -> str:
    if after == before:
        raise _Refusal(EditStatus.INVALID, "edit changes nothing")
    if _protected_fingerprint(after) != _protected_fingerprint(before):
        # Safety net: the span checks above should make this unreachable.
        raise _Refusal(EditStatus.PROTECTED, "edit would change a protected block")
    try:
        original = SkillDocument.parse(before)
    except SkillError:
        return after  # already corrupt: nothing an edit can preserve
    try:
        result = SkillDocument.parse(after)
    except SkillError as exc:
        raise _Refusal(EditStatus.INVALID, f"edit would break the frontmatter: {exc}") from None
    if (original.frontmatter_raw is None) != (result.frontmatter_raw is None):
        raise _Refusal(EditStatus.INVALID, "edit would add or remove the frontmatter block")
    return after


def _protected_fingerprint(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Every marker (name, kind) and every block's exact text, in document order."""
    markers = [(m.name, m.kind) for m in find_markers(text)]
    return markers, [text[b.start : b.end] for b in find_blocks(text)]
