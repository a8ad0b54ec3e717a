"""The rejected-edit buffer: this epoch's losing edits and failure patterns (DESIGN §4).

Analysts see it in their prompts so they do not propose an edit that already lost, and
(as published) the failure patterns of earlier steps, so they can tell which remain
unsolved. The two are rendered apart: the prompts' section of edits that did not help
holds only edits, and the failure patterns follow under their own heading. It is
Unbounded by default, as published: every rejected edit whole. With
`train.optimizer.rejected_buffer_chars` (configs/features/bounded_buffer.yaml) the text
is kept within that many characters, newest first, and targets and contents are clipped
to 80 and 160 characters. It is
part of the persisted run state: `to_dict`/`from_dict` round-trip exactly, so a resumed
run shows the optimizer the same prompt text an uninterrupted run would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.skill.edits import Edit

FORMAT_VERSION = 1
NO_REJECTIONS = "(none yet)"
PATTERNS_HEADER = "# Failure patterns seen at earlier steps of this epoch (these are not edits)"
_TARGET_CHARS = 80
_CONTENT_CHARS = 160


@dataclass(frozen=True)
class Rejection:
    step: int
    edits: tuple[Edit, ...]
    candidate_score: float | None  # None: rejected before or without a full score
    best: float
    reason: str
    # What a whole-skill candidate was made from (update_mode rewrite / full_rewrite:
    # its suggestions or change summary), since it has no edits to show.
    evidence: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class FailurePatterns:
    step: int
    text: str


@dataclass
class RejectedEditBuffer:
    entries: list[Rejection | FailurePatterns] = field(default_factory=list)  # oldest first

    def add_rejection(
        self,
        step: int,
        edits: list[Edit],
        candidate_score: float | None,
        best: float,
        reason: str,
        evidence: list[dict[str, Any]] | None = None,
    ) -> None:
        self.entries.append(
            Rejection(step, tuple(edits), candidate_score, best, reason, tuple(evidence or ()))
        )

    def add_failure_patterns(self, step: int, text: str) -> None:
        if text.strip():
            self.entries.append(FailurePatterns(step, text.strip()))

    def reset(self) -> None:
        """At an epoch boundary: the next epoch starts from a new skill."""
        self.entries.clear()

    def __len__(self) -> int:
        return len(self.entries)

    def render(self, max_chars: int | None = None) -> str:
        """Markdown for the analysts' prompt, within `max_chars` if given ("" if empty): the rejected
        candidates' edits newest first ("(none yet)" when there are none), then the failure
        patterns, newest first, under PATTERNS_HEADER (a heading of the prompt's level, so
        the section of edits ends before them).

        When not everything fits, rejections keep the room first, then the newest
        patterns; a final line says how many entries were left out. An entry too long on
        its own is cut with "…"; a budget too small for even that gives "".
        """
        return self._render(max_chars, patterns=True)

    def render_rejections(self, max_chars: int | None = None) -> str:
        """Only the rejected candidates and their edits, newest first ("" if none): what
        the epoch-end prompts are told the gate turned down."""
        return self._render(max_chars, patterns=False)

    def _render(self, max_chars: int | None, *, patterns: bool) -> str:
        newest = list(reversed(self.entries))
        clip = max_chars is not None
        rejections = [_render_entry(e, clip) for e in newest if isinstance(e, Rejection)]
        found = [_render_entry(e, clip) for e in newest if isinstance(e, FailurePatterns)]
        shown_patterns = found if patterns else []
        if (max_chars is not None and max_chars <= 0) or not (rejections or shown_patterns):
            return ""
        ordered = [(True, r) for r in rejections] + [(False, p) for p in shown_patterns]
        total = len(ordered)

        def compose(kept: list[tuple[bool, str]]) -> str:
            edits = [t for is_rejection, t in kept if is_rejection]
            seen = [t for is_rejection, t in kept if not is_rejection]
            parts = ["\n\n".join(edits) if edits else NO_REJECTIONS]
            if seen:
                parts.append(PATTERNS_HEADER + "\n" + "\n\n".join(seen))
            return "\n\n".join(parts) + _omitted_note(total - len(kept))

        if max_chars is None:
            return compose(ordered)
        kept: list[tuple[bool, str]] = []
        for entry in ordered:
            if len(compose([*kept, entry])) > max_chars:
                break
            kept.append(entry)
        if not kept:  # the first entry alone is too long: cut it rather than show nothing
            is_rejection, text = ordered[0]
            frame = len(compose([(is_rejection, "")]))
            room = max_chars - frame
            if room <= 40:
                return ""  # a budget this small cannot carry anything useful
            return compose([(is_rejection, text[: room - 1] + "…")])[:max_chars]
        return compose(kept)[:max_chars]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "entries": [_entry_to_dict(e) for e in self.entries],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RejectedEditBuffer:
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unsupported rejected-edit buffer version: {data.get('version')!r}")
        return cls([_entry_from_dict(d) for d in data.get("entries", [])])


def _omitted_note(count: int) -> str:
    return f"\n\n_({count} older entries omitted)_" if count else ""


def _entry_to_dict(entry: Rejection | FailurePatterns) -> dict[str, Any]:
    if isinstance(entry, FailurePatterns):
        return {"kind": "failure_patterns", "step": entry.step, "text": entry.text}
    out = {
        "kind": "rejection",
        "step": entry.step,
        "edits": [e.to_dict() for e in entry.edits],
        "candidate_score": entry.candidate_score,
        "best": entry.best,
        "reason": entry.reason,
    }
    if entry.evidence:
        out["evidence"] = [dict(e) for e in entry.evidence]
    return out


def _entry_from_dict(data: dict[str, Any]) -> Rejection | FailurePatterns:
    if data["kind"] == "failure_patterns":
        return FailurePatterns(int(data["step"]), str(data["text"]))
    if data["kind"] == "rejection":
        score = data["candidate_score"]
        return Rejection(
            step=int(data["step"]),
            edits=tuple(Edit.from_dict(e) for e in data["edits"]),
            candidate_score=None if score is None else float(score),
            best=float(data["best"]),
            reason=str(data["reason"]),
            evidence=tuple(dict(e) for e in data.get("evidence", [])),
        )
    raise ValueError(f"unknown rejected-edit buffer entry kind: {data['kind']!r}")


def _render_entry(entry: Rejection | FailurePatterns, clip: bool) -> str:
    if isinstance(entry, FailurePatterns):
        return f"### Step {entry.step}\n{entry.text}"
    score = "not scored" if entry.candidate_score is None else f"{entry.candidate_score:.4f}"
    lines = [
        f"### Step {entry.step}: rejected (candidate {score} vs best {entry.best:.4f})",
        f"Reason: {_one_line(entry.reason)}",
    ]
    for edit in entry.edits:
        lines.append(_render_edit(edit, clip))
    for item in entry.evidence:
        lines.append(_render_evidence(item, clip))
    if not entry.edits and not entry.evidence:
        lines.append("- (no edits)")
    return "\n".join(lines)


def _render_edit(edit: Edit, clip: bool) -> str:
    content = _quote(edit.content, _CONTENT_CHARS if clip else None)
    if edit.op == "append":
        return f"- append {content}"
    target = _quote(edit.target, _TARGET_CHARS if clip else None)
    if edit.op == "delete":
        return f"- delete {target}"
    return f"- {edit.op} {target} → {content}"


def _render_evidence(item: dict[str, Any], clip: bool) -> str:
    """A suggestion ("- clarify "title": instruction") or a full rewrite's summary."""
    long, short = (_CONTENT_CHARS, _TARGET_CHARS) if clip else (None, None)
    if item.get("kind") == "full_rewrite":
        return f"- whole-skill rewrite: {_quote(str(item.get('summary', '')), long)}"
    title = _quote(str(item.get("title", "")), short)
    return f"- {item.get('kind', '?')} {title}: {_quote(str(item.get('instruction', '')), long)}"


def _quote(text: str, limit: int | None) -> str:
    clipped = text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
    return json.dumps(clipped, ensure_ascii=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())
