"""Update modes and skill-aware reflection in the loop (issue 15): the `llm` strategy
behind a scripted optimizer TEST DOUBLE on the hand-checkable scenario
(tests/support/train_scenario.py), the skill-sensitive TEST DOUBLE as the target."""

from __future__ import annotations

import json

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import build_model_client
from core.optimizer.execution_notes import EXECUTION_NOTES_BLOCK
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.skill.protected_blocks import read_block
from core.training.setup import choose_strategy
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config

RULE = "Answer with only the city name."


def epoch_replies(prompt: str) -> str | None:
    if "epoch-level guidance" in prompt:
        return json.dumps({"guidance": ""})
    if "notes for yourself" in prompt:
        return json.dumps({"notes": "rules helped"})
    return None


def rewriter(*, break_block: bool = False, prompts: list[str] | None = None):
    def respond(request) -> str:
        prompt = request.messages[-1]["content"]
        if prompts is not None:
            prompts.append(prompt)
        if (epoch := epoch_replies(prompt)) is not None:
            return epoch
        if "Rewrite the skill" in prompt:
            skill = prompt.split("<skill>\n", 1)[1].split("\n</skill>", 1)[0]
            if break_block:
                skill = skill.replace("Guidance.", "Guidance, rewritten.")
            return json.dumps({"skill": skill + "\n" + RULE + "\n", "summary": "format rule"})
        if "Rank suggestions" in prompt:
            return json.dumps({"order": [0]})
        return json.dumps(
            {
                "analysis": "sentences instead of names",
                "suggestions": [
                    {
                        "kind": "add",
                        "title": "format rule",
                        "motivation": "answers were sentences",
                        "instruction": "Tell the model to answer with only the city name.",
                        "priority": "high",
                    }
                ],
            }
        )

    return respond


async def train(tmp_path, optimizer_fn, initial=INITIAL_SKILL, gate=None, **method):
    extra = {"gate": gate} if gate else {}
    tree = scenario_config(tmp_path, strategy="llm", optimizer=method, **extra)
    config = config_from_dict(tree)
    client = build_model_client(
        config, scripted={"target": SkillSensitiveTarget(), "optimizer": optimizer_fn}
    )
    bus = EventBus()
    try:
        summary = await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / "run"),
            bus=bus,
            client=client,
            initial_skill=initial,
        )
    finally:
        await client.aclose()
    return summary, None


def step_json(tmp_path, step: int, name: str):
    return json.loads((tmp_path / "run" / "steps" / f"{step:04d}" / name).read_text())


async def test_rewrite_mode_candidate_is_gated_and_staged_with_its_suggestions(tmp_path):
    summary, _ = await train(tmp_path, rewriter(), update_mode="rewrite")
    assert summary.best_val == pytest.approx(2 / 5)  # the format rule: v03, v04
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["accepted"] is True
    proposal = step_json(tmp_path, 0, "proposal.json")
    assert proposal["suggestions"][0]["title"] == "format rule"
    assert proposal["edits"] == []
    staged = json.loads((tmp_path / "run" / "staged" / "step-0000.json").read_text())
    assert [e["title"] for e in staged["edits"]] == ["format rule"]  # the evidence
    assert staged["edits"][0]["kind"] == "add"


async def test_rewrite_that_changes_a_protected_block_gets_the_block_put_back(tmp_path):
    """Issue 22: as published, the owner's block is restored and the rest of the rewrite
    (the format rule) is gated as usual (it was an invalid candidate before)."""
    block = "<!-- skillopt:slow-update:start -->\nGuidance.\n<!-- skillopt:slow-update:end -->"
    guided = INITIAL_SKILL + "\n" + block + "\n"
    respond = rewriter(break_block=True)
    summary, _ = await train(tmp_path, respond, guided, update_mode="rewrite")
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["accepted"] is True
    candidate = (tmp_path / "run" / "steps" / "0000" / "candidate.md").read_text()
    assert block in candidate and "rewritten" not in candidate and RULE in candidate
    assert summary.best_val == pytest.approx(2 / 5)


def lapse_noticer(request) -> str:
    prompt = request.messages[-1]["content"]
    if (epoch := epoch_replies(prompt)) is not None:
        return epoch
    lapses = ["Answer with only the city name: the model answered in a sentence."]
    if "Skill defects and execution lapses" not in prompt:
        lapses = []
    return json.dumps({"analysis": "a lapse", "edits": [], "lapses": lapses * 2})


async def test_gated_notes_lapses_become_a_gated_protected_appendix(tmp_path):
    """The gated_notes overlay (ours): the notes are part of the gated candidate."""
    skill = INITIAL_SKILL + "\nAnswer with the city name.\n"  # a rule the double ignores
    summary, _ = await train(tmp_path, lapse_noticer, skill, skill_aware=True, notes_gated=True)
    candidate = (tmp_path / "run" / "steps" / "0000" / "candidate.md").read_text()
    notes = read_block(candidate, EXECUTION_NOTES_BLOCK)
    assert notes is not None and notes.count("- Answer with only the city name") == 1
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["accepted"] is True  # the note carries the double's format rule: it scores
    assert summary.best_val == pytest.approx(2 / 5)
    reflections = step_json(tmp_path, 0, "reflections.json")
    assert any(r["kind"] == "notes" for r in reflections)


async def test_skill_aware_notes_are_added_after_the_gate_by_default(tmp_path):
    """Published: the lapse notes go into the current skill after the gate, ungated; a
    notes-only step has no candidate to gate, and the best skill keeps its own text."""
    skill = INITIAL_SKILL + "\nAnswer with the city name.\n"
    summary, _ = await train(tmp_path, lapse_noticer, skill, skill_aware=True)
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["accepted"] is False and gate["reason"] == "no edits proposed"
    assert not (tmp_path / "run" / "steps" / "0000" / "candidate.md").exists()
    added = step_json(tmp_path, 0, "notes.json")
    assert added["added"] is True and "Answer with only the city name" in added["notes"]
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    noted = [v for v in state["versions"] if v["source"] == "notes"]
    assert noted and noted[0]["step"] == 0
    current = (tmp_path / "run" / "skills" / f"v{state['current_version']:04d}.md").read_text()
    notes = read_block(current, EXECUTION_NOTES_BLOCK)
    assert notes is not None and notes.count("- Answer with only the city name") == 1
    # The noted skill became best only at the end, promoted for beating it on val (0 -> 0.4).
    assert summary.best_version == noted[0]["version"] and summary.baseline_val == 0.0
    assert [r["source"] for r in summary.staged] == ["final"]
    assert summary.best_val == pytest.approx(2 / 5)


def test_whole_skill_modes_and_skill_aware_need_an_optimizer_model(tmp_path):
    for method in ({"update_mode": "rewrite"}, {"skill_aware": True}):
        config = config_from_dict(scenario_config(tmp_path, optimizer=method))
        with pytest.raises(ConfigError, match="fewshot"):
            choose_strategy(config, client=None)
