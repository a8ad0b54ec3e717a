"""Skill-aware reflection's appendix (train.optimizer.skill_aware): failure analysts tell a
defect of the skill (fixed by an edit or suggestion) from a lapse, a rule the skill already
states that the target did not follow. A lapse becomes a one-sentence note in a protected
"execution notes" block at the end of the skill: the only writer of that block is this
module (through core.skill.protected_blocks.write_block in the trainer), and edits cannot
touch it. As published, the trainer writes it after the step's gate; with
train.optimizer.notes_gated it is part of the candidate, gated like any change.

Notes lose any block marker they echo and are de-duplicated (case and whitespace aside)
against the block's notes. Once the block would pass `max_chars`, one call consolidates
it; the consolidation is accepted only if it is shorter, else the block keeps its notes
and the newest are not added (the notes are reminders, and an ever-growing appendix
would crowd out the skill).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.optimizer import reply_schemas as schemas
from core.optimizer.json_reply import JsonReply, OptimizerOutputError, Shape
from core.optimizer.prompt_templates import render_prompt
from core.skill.protected_blocks import read_block, strip_markers

EXECUTION_NOTES_BLOCK = "execution-notes"
HEADING = "## Execution notes (rules above that were not followed)"


def _check_notes(obj: dict) -> dict:
    notes = obj.get("notes")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise OptimizerOutputError('"notes" must be an array of strings')
    return {"notes": [clean_note(n) for n in notes if clean_note(n)]}


CONSOLIDATE_SHAPE = Shape(
    "consolidate_notes", '{"notes": ["...", "..."]}', _check_notes, schemas.CONSOLIDATE_NOTES
)


@dataclass(frozen=True)
class NotesUpdate:
    content: str | None  # the block's new content; None = unchanged
    text: str  # for the reflection log


def notes_in(skill: str) -> list[str]:
    block = read_block(skill, EXECUTION_NOTES_BLOCK) or ""
    return [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]


def render_notes(notes: list[str]) -> str:
    return "\n".join([HEADING, *(f"- {n}" for n in notes)]) if notes else ""


def clean_note(note: str) -> str:
    """One line without block markers: a note echoing `<!-- skillopt:... -->` (the skill it
    was shown has them) could not be written, and a resumed run would replay the reply."""
    return " ".join(strip_markers(" ".join(note.split())).split())  # a line break can hide one


def _key(note: str) -> str:
    return " ".join(note.lower().split()).rstrip(".")


def add_notes(existing: list[str], new: list[str]) -> list[str]:
    seen = {_key(n) for n in existing}
    out = list(existing)
    for note in new:
        note = clean_note(note)
        if note and _key(note) not in seen:
            seen.add(_key(note))
            out.append(note)
    return out


async def update_notes(
    ask: Callable[[str, Shape, str], Awaitable[JsonReply]],
    skill: str,
    lapses: list[str],
    *,
    max_chars: int,
) -> NotesUpdate:
    existing = notes_in(skill)
    notes = add_notes(existing, lapses)
    if notes == existing:
        return NotesUpdate(None, "no new execution notes")
    content = render_notes(notes)
    added = len(notes) - len(existing)
    if len(content) <= max_chars:
        return NotesUpdate(content, f"{added} new execution note(s)")
    prompt = render_prompt(
        "consolidate_notes",
        skill=skill,
        notes="\n".join(f"- {n}" for n in notes),
        count=len(notes),
    )
    reply = await ask(prompt, CONSOLIDATE_SHAPE, content)
    consolidated = render_notes((reply.value or {}).get("notes", [])) if reply.ok else ""
    if consolidated and len(consolidated) < len(content):
        return NotesUpdate(consolidated, f"consolidated {len(notes)} notes")
    why = reply.error or "the consolidation was not shorter"
    return NotesUpdate(None, f"execution notes unchanged ({why})")
