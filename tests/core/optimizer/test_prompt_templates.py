"""The prompt files and their renderer (core.optimizer.prompt_templates)."""

from __future__ import annotations

import pytest

from core.optimizer.prompt_templates import TemplateError, load_prompt, render

PROMPTS = {
    "analyst_failures": '{"analysis":',
    "analyst_successes": '{"analysis":',
    "merge": '{"analysis":',
    "rank": '{"order":',
    "slow_update": '{"guidance":',
    "meta_skill": '{"notes":',
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
