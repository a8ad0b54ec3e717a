"""The prompt files and their renderer (core.optimizer.prompt_templates)."""

from __future__ import annotations

import pytest

from core.optimizer.prompt_templates import TemplateError, load_prompt, render

PROMPTS = {
    "analyst_failures": '{"analysis":',
    "analyst_successes": '{"analysis":',
    "merge": '{"analysis":',
    "rank": '{"order":',
    "slow_update": '{"reasoning": "<what the outcomes show>", "content":',
    "meta_skill": '{"reasoning": "<what the outcomes show>", "content":',
}


@pytest.mark.parametrize(("name", "json_start"), PROMPTS.items())
def test_every_prompt_ships_and_states_its_json(name, json_start):
    text = load_prompt(name)
    assert json_start in text
    assert "exactly one JSON object" in text


def test_render_fills_only_placeholders_and_does_not_rescan_values():
    template = 'Skill:\n{skill}\nReply {"edits": []} with at most {n} edits.'
    out = render(template, {"skill": "use {n} and {skill} literally", "n": 3})
    assert out == 'Skill:\nuse {n} and {skill} literally\nReply {"edits": []} with at most 3 edits.'


def test_missing_value_is_an_error():
    with pytest.raises(TemplateError, match="skill"):
        render("{skill}", {})


def test_edit_rules_describe_insert_after_as_the_engine_applies_it():
    """Issue 22: the prompt said "right after" the target; the engine inserts after the
    target's line. The prompt now says what the engine does, shown on the engine."""
    from core.optimizer.prompt_templates import load_prompt
    from core.skill.edits import Edit, apply_edits

    rules = load_prompt("edit_rules")
    assert "right after it" not in rules
    assert 'after the whole line on which "target" ends' in rules
    skill = "# Skill\nAnswer with the city, then stop.\nEnd.\n"
    edit = Edit(op="insert_after", target="with the city", content="Never add a country.")
    out, _ = apply_edits(skill, [edit])
    assert out == "# Skill\nAnswer with the city, then stop.\nNever add a country.\nEnd.\n"
