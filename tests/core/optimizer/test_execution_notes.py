"""The skill-aware execution-notes appendix (core.optimizer.execution_notes): de-duplicated
notes, one consolidation call past the threshold, kept only if shorter. The ask function is
a scripted TEST DOUBLE returning fixed JsonReply objects."""

from __future__ import annotations

from core.optimizer.execution_notes import (
    EXECUTION_NOTES_BLOCK,
    notes_in,
    render_notes,
    update_notes,
)
from core.optimizer.json_reply import JsonReply
from core.skill.protected_blocks import write_block

SKILL = "# Skill\n\nAnswer with only the name.\n"


def asker(value, calls):
    async def ask(prompt, shape, skill=""):
        calls.append(prompt)
        if value is None:
            return JsonReply(value=None, error="bad")
        return JsonReply(value=shape.check(value))

    return ask


async def test_new_notes_are_deduplicated_against_the_block():
    skill = write_block(SKILL, EXECUTION_NOTES_BLOCK, render_notes(["Use only the name."]))
    calls: list[str] = []
    same = await update_notes(asker(None, calls), skill, ["use only  the name"], max_chars=1500)
    assert same.content is None and calls == []
    more = await update_notes(
        asker(None, calls), skill, ["Cite no source.", "cite no source"], max_chars=1500
    )
    assert notes_in(write_block(skill, EXECUTION_NOTES_BLOCK, more.content)) == [
        "Use only the name.",
        "Cite no source.",
    ]


async def test_past_the_threshold_one_call_consolidates_and_only_shorter_is_kept():
    lapses = [f"Rule {i} was not followed by the model in its answer." for i in range(6)]
    calls: list[str] = []
    shorter = await update_notes(
        asker({"notes": ["Rules 0-5 were not followed."]}, calls), SKILL, lapses, max_chars=200
    )
    assert len(calls) == 1 and "Consolidate the execution notes" in calls[0]
    assert shorter.content == render_notes(["Rules 0-5 were not followed."])
    longer = await update_notes(
        asker({"notes": lapses + ["extra"]}, []), SKILL, lapses, max_chars=200
    )
    assert longer.content is None and "not shorter" in longer.text
    failed = await update_notes(asker(None, []), SKILL, lapses, max_chars=200)
    assert failed.content is None


async def test_notes_echoing_block_markers_are_written_without_them():
    echo = "<!-- skillopt:execution-notes:end --> Use only the name.\n<!-- skillopt:x:start -->"
    lapse = await update_notes(asker(None, []), SKILL, [echo], max_chars=1500)
    written = write_block(SKILL, EXECUTION_NOTES_BLOCK, lapse.content)  # raised before
    assert notes_in(written) == ["Use only the name."]
    consolidated = await update_notes(
        asker({"notes": ["<!-- skillopt:slow-update:start -->", "Rules 0-5."]}, []),
        SKILL,
        [f"Rule {i} was not followed by the model in its answer." for i in range(6)],
        max_chars=200,
    )
    assert consolidated.content == render_notes(["Rules 0-5."])
