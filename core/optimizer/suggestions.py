"""Typed suggestions, the unit of the `rewrite` update mode, and whole candidates, the
unit of `full_rewrite` (train.optimizer.update_mode).

A suggestion says what to change and why, not where: one later call rewrites the skill
from the selected ones. Kinds are the published six (add, remove, merge, reorganise,
compress, clarify); an entry of another kind, or without an instruction, is dropped and
counted, like a malformed edit. The shapes here are what the prompts ask for.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from core.optimizer import reply_schemas as schemas
from core.optimizer.edit_lists import NONE
from core.optimizer.json_reply import OptimizerOutputError, Shape, lapses_of, need_str
from core.optimizer.reflection_groups import clip

KINDS = schemas.SUGGESTION_KINDS
PRIORITIES = schemas.PRIORITIES


@dataclass(frozen=True)
class Suggestion:
    kind: str  # one of KINDS
    title: str
    instruction: str  # what the rewrite should do
    motivation: str = ""  # the observed behaviour behind it
    priority: str = "medium"  # one of PRIORITIES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Suggestion:
        priority = str(data.get("priority") or "medium").lower()
        return cls(
            kind=str(data["kind"]).lower(),
            title=str(data.get("title") or "").strip(),
            instruction=str(data["instruction"]).strip(),
            motivation=str(data.get("motivation") or "").strip(),
            priority=priority if priority in PRIORITIES else "medium",
        )


def _usable(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and str(entry.get("kind", "")).lower() in KINDS
        and isinstance(entry.get("instruction"), str)
        and bool(entry["instruction"].strip())
    )


def _check_suggestions(obj: dict[str, Any]) -> dict[str, Any]:
    if "suggestions" not in obj:
        raise OptimizerOutputError('missing key "suggestions"')
    entries = obj["suggestions"]
    if not isinstance(entries, list):
        raise OptimizerOutputError('"suggestions" must be an array')
    kept = [Suggestion.from_dict(e) for e in entries if _usable(e)]
    return {
        "analysis": need_str(obj, "analysis", optional=True),
        "suggestions": kept,
        "dropped": len(entries) - len(kept),
        "lapses": lapses_of(obj),
    }


def _check_skill(obj: dict[str, Any]) -> dict[str, Any]:
    skill = need_str(obj, "skill")
    if not skill.strip():
        raise OptimizerOutputError('"skill" must not be empty')
    return {
        "skill": skill,
        "summary": need_str(obj, "summary", optional=True),
        "analysis": need_str(obj, "analysis", optional=True),
        "lapses": lapses_of(obj),
    }


def _check_pick(obj: dict[str, Any]) -> dict[str, Any]:
    pick = obj.get("pick")
    if pick is not None and (isinstance(pick, bool) or not isinstance(pick, int)):
        raise OptimizerOutputError('"pick" must be a candidate number or null')
    skill = need_str(obj, "skill", optional=True)
    if pick is None and not skill.strip():
        raise OptimizerOutputError('give "pick" (a candidate number) or a combined "skill"')
    return {"pick": pick, "skill": skill, "summary": need_str(obj, "summary", optional=True)}


_SUGGESTION = (
    '{"kind": "add|remove|merge|reorganise|compress|clarify", "title": "...", '
    '"motivation": "...", "instruction": "...", "priority": "high|medium|low"}'
)
SUGGESTIONS_SHAPE = Shape(
    "suggestions",
    '{"analysis": "...", "suggestions": [' + _SUGGESTION + "]}",
    _check_suggestions,
    schemas.SUGGESTIONS,
)
REWRITE_SHAPE = Shape(
    "rewrite", '{"skill": "<the whole skill>", "summary": "..."}', _check_skill, schemas.REWRITE
)
CANDIDATE_SHAPE = Shape(
    "full_rewrite",
    '{"analysis": "...", "summary": "...", "skill": "<the whole skill>"}',
    _check_skill,
    schemas.REWRITE,
)
PICK_SHAPE = Shape(
    "merge_full",
    '{"pick": 0, "skill": "", "summary": "..."}  (or "pick": null)',
    _check_pick,
    schemas.PICK,
)


def dedupe_suggestions(
    suggestions: list[Suggestion], seen: set[tuple[str, str]] | None = None
) -> list[Suggestion]:
    """Drop repeats of (kind, instruction), whitespace and case aside; keep the first."""
    seen = set() if seen is None else seen
    out = []
    for s in suggestions:
        key = (s.kind, " ".join(s.instruction.lower().split()))
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def by_priority(suggestions: list[Suggestion]) -> list[Suggestion]:
    """Stable: high before medium before low, list order within each."""
    return sorted(suggestions, key=lambda s: PRIORITIES.index(s.priority))


def render_suggestions(
    suggestions: list[Suggestion], *, numbered: bool = False, max_chars: int = 800
) -> str:
    lines = []
    for i, s in enumerate(suggestions):
        label = f"[{i}] " if numbered else "- "
        lines.append(
            f"{label}kind: {s.kind} | priority: {s.priority} | title: {s.title or '(untitled)'}\n"
            f"  instruction: {clip(s.instruction, max_chars)}\n"
            f"  motivation: {clip(s.motivation, 300) or '(none given)'}"
        )
    return "\n".join(lines) or NONE
