"""Variants in the loop (issue 15): the autonomous learning rate recorded per step (the
run directory and a LearningRateDecided event), in patch and rewrite mode, and refused
where it has no meaning (fewshot, full_rewrite). The `llm` strategy behind a scripted
optimizer TEST DOUBLE on the hand-checkable scenario."""

from __future__ import annotations

import json
import re

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import build_model_client
from core.run.events import LearningRateDecided, StepFinished
from core.training.setup import choose_strategy
from tests.core.training.test_method_fidelity import run
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import scenario_config

RULE = "Answer with only the city name."


def optimizer(request) -> str:
    prompt = request.messages[-1]["content"]
    if "this step's learning rate" in prompt:
        return json.dumps({"count": 1, "reasoning": "one at a time", "confidence": "medium"})
    if '"order"' in prompt:
        return json.dumps({"order": [1, 0], "reason": "the rule first"})
    if "epoch-level guidance" in prompt:
        return json.dumps({"guidance": ""})
    if "notes for yourself" in prompt:
        return json.dumps({"notes": "rules helped"})
    return json.dumps(
        {
            "analysis": "sentences",
            "edits": [
                {"op": "append", "content": "- Norway: Oslo", "rationale": "fact"},
                {"op": "append", "content": RULE, "rationale": "format"},
            ],
        }
    )


async def test_autonomous_lr_applies_what_the_model_chose_and_records_it(tmp_path):
    tree = scenario_config(tmp_path, strategy="llm", optimizer={"lr_control": "autonomous"})
    config = config_from_dict(tree)
    client = build_model_client(
        config, scripted={"target": SkillSensitiveTarget(), "optimizer": optimizer}
    )
    try:
        summary, events = await run(tmp_path, config=config, client=client)
    finally:
        await client.aclose()
    step0 = json.loads((tmp_path / "run" / "steps" / "0000" / "proposal.json").read_text())
    assert step0["lr"]["control"] == "autonomous" and step0["lr"]["count"] == 1
    assert step0["lr"]["pool"] == 2 and step0["lr"]["reasoning"] == "one at a time"
    assert [e["content"] for e in step0["edits"]] == [RULE]  # ranked first, one applied
    finished = [e for e in events if isinstance(e, StepFinished)]
    assert finished[0].edit_budget == 1
    assert summary.best_val == pytest.approx(2 / 5)  # the rule alone: v03 and v04
    decided = [e for e in events if isinstance(e, LearningRateDecided)]
    assert [e.step for e in decided] == [0, 1, 2, 3]  # one per step, for the Run screen
    assert (decided[0].count, decided[0].pool, decided[0].asked) == (1, 2, 1)
    assert decided[0].confidence == "medium" and decided[0].reasoning == "one at a time"


async def test_a_fixed_learning_rate_emits_no_decision(tmp_path):
    _, events = await run(tmp_path)
    assert any(isinstance(e, StepFinished) for e in events)
    assert not any(isinstance(e, LearningRateDecided) for e in events)


def rewrite_optimizer(prompts: list[str]):
    """Rewrite mode: two suggestions (a fact, the format rule), ranked rule first; the
    learning rate takes one while the skill has no format rule, then none."""

    def respond(request) -> str:
        prompt = request.messages[-1]["content"]
        prompts.append(prompt)
        skill = prompt.split("<skill>\n", 1)[-1].split("\n</skill>", 1)[0]
        if "this step's learning rate" in prompt:
            if RULE in skill:
                return json.dumps({"count": 0, "reasoning": "the rule is in", "risks": "none"})
            return json.dumps({"count": 1, "reasoning": "the rule first", "confidence": "high"})
        if "Rank suggestions" in prompt:
            return json.dumps({"order": [1, 0], "reason": "the rule is general"})
        if "Rewrite the skill" in prompt:
            lines = re.findall(r"instruction: Add the line '(.+?)'", prompt)
            return json.dumps({"skill": skill + "\n" + "\n".join(lines) + "\n"})
        if "epoch-level guidance" in prompt:
            return json.dumps({"guidance": ""})
        if "notes for yourself" in prompt:
            return json.dumps({"notes": "rules helped"})
        add = ["Add the line '- Norway: Oslo'", f"Add the line '{RULE}'"]
        return json.dumps(
            {
                "analysis": "sentences and a missing fact",
                "suggestions": [{"kind": "add", "instruction": i, "priority": "high"} for i in add],
            }
        )

    return respond


async def test_rewrite_mode_with_autonomous_lr_rewrites_from_the_chosen_count(tmp_path):
    prompts: list[str] = []
    tree = scenario_config(
        tmp_path, strategy="llm", optimizer={"lr_control": "autonomous", "update_mode": "rewrite"}
    )
    config = config_from_dict(tree)
    client = build_model_client(
        config,
        scripted={"target": SkillSensitiveTarget(), "optimizer": rewrite_optimizer(prompts)},
    )
    try:
        summary, events = await run(tmp_path, config=config, client=client)
    finally:
        await client.aclose()
    steps = tmp_path / "run" / "steps"
    step0 = json.loads((steps / "0000" / "proposal.json").read_text())
    assert step0["lr"]["control"] == "autonomous" and step0["budget"] == 1
    assert (step0["lr"]["count"], step0["lr"]["pool"]) == (1, 2)
    assert [s["instruction"] for s in step0["suggestions"]] == [f"Add the line '{RULE}'"]
    assert json.loads((steps / "0000" / "gate.json").read_text())["accepted"] is True
    assert summary.best_val == pytest.approx(2 / 5)  # the rule alone: Oslo was not let in
    step1 = json.loads((steps / "0001" / "proposal.json").read_text())
    assert step1["lr"]["count"] == 0 and step1["suggestions"] == []  # no candidate
    assert not (steps / "0001" / "candidate.md").exists()
    assert json.loads((steps / "0001" / "gate.json").read_text())["accepted"] is False
    rewrites = [p for p in prompts if "Rewrite the skill" in p]
    assert len(rewrites) == 1 and "Norway" not in rewrites[0].split("# Suggestions", 1)[1]
    decided = [e for e in events if isinstance(e, LearningRateDecided)]
    assert [(e.step, e.count, e.pool) for e in decided][:2] == [(0, 1, 2), (1, 0, 2)]
    assert [e.edit_budget for e in events if isinstance(e, StepFinished)][:2] == [1, 0]


def test_full_rewrite_with_autonomous_lr_is_refused_at_load(tmp_path):
    method = {"lr_control": "autonomous", "update_mode": "full_rewrite"}
    with pytest.raises(ConfigError, match="full_rewrite has no ranked pool") as caught:
        config_from_dict(scenario_config(tmp_path, strategy="llm", optimizer=method))
    assert "\n" not in str(caught.value) and "lr_control fixed" in str(caught.value)


def test_autonomous_lr_needs_an_optimizer_model(tmp_path):
    config = config_from_dict(scenario_config(tmp_path, optimizer={"lr_control": "autonomous"}))
    with pytest.raises(ConfigError, match="lr_control"):
        choose_strategy(config, client=None)
