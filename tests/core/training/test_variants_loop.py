"""Variants in the loop (issue 15): the autonomous learning rate recorded per step, and
refused where no optimizer model could decide it. The `llm` strategy behind a scripted
optimizer TEST DOUBLE on the hand-checkable scenario."""

from __future__ import annotations

import json

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import build_model_client
from core.run.events import StepFinished
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
    if '"guidance"' in prompt:
        return json.dumps({"guidance": ""})
    if '"notes"' in prompt:
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


def test_autonomous_lr_needs_an_optimizer_model(tmp_path):
    config = config_from_dict(scenario_config(tmp_path, optimizer={"lr_control": "autonomous"}))
    with pytest.raises(ConfigError, match="lr_control"):
        choose_strategy(config, client=None)
