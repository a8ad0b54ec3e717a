"""Loop-level defaults that follow the published method (issue 38), each with the overlay
that keeps our earlier behaviour, on the hand-checkable scenario
(tests/support/train_scenario.py, the skill-sensitive TEST DOUBLE as target)."""

from __future__ import annotations

import json

from core.skill.edits import Edit
from tests.core.training.test_method_fidelity import RecordingStrategy, run


def step_json(tmp_path, step: int, name: str):
    return json.loads((tmp_path / "run" / "steps" / f"{step:04d}" / name).read_text())


async def test_the_schedule_does_not_advance_on_a_step_without_patches(tmp_path):
    """Linear 4 -> 0 over 4 steps is 3, 2, 1, 0; step 0 proposes nothing, so step 1 gets
    the first budget again, as the published scheduler (stepped only where there are
    patches) gives it. Fails on the old code (budget by step index: 2 at step 1)."""
    nothing = []
    rule = [Edit("append", "", "- Norway: Oslo")]
    strategy = RecordingStrategy(edits_by_step={0: nothing, 1: rule, 2: rule, 3: rule})
    summary, _ = await run(tmp_path, strategy, schedule={"kind": "linear", "start": 4, "end": 0})
    assert summary.status == "finished"
    budgets = [step_json(tmp_path, step, "proposal.json")["budget"] for step in range(4)]
    assert budgets == [3, 3, 2, 1]


TOO_LONG = Edit("append", "", "- Norway: Oslo\n" + "Answer with the capital city only. " * 20)


async def test_a_candidate_over_max_skill_chars_is_scored_by_default(tmp_path):
    """Published: no check before scoring. Fails on the old code (rejected unscored)."""
    strategy = RecordingStrategy(edits_by_step={0: [TOO_LONG]})
    await run(tmp_path, strategy, max_skill_chars=300, epochs=1)
    gate = step_json(tmp_path, 0, "gate.json")
    assert "invalid" not in gate["reason"] and gate.get("candidate_score") is not None


async def test_prevalidate_rejects_it_unscored(tmp_path):
    strategy = RecordingStrategy(edits_by_step={0: [TOO_LONG]})
    await run(tmp_path, strategy, max_skill_chars=300, epochs=1, prevalidate=True)
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["reason"].startswith("invalid candidate: skill is")


async def test_a_step_lays_edits_out_as_published_and_strict_targets_keep_ours(tmp_path):
    """Published apply_patch leaves a blank line before inserted and appended content.
    Fails on the old code (the rule went on the next line, no blank line)."""
    edits = [Edit("insert_after", "- France: Paris", "- Norway: Oslo")]
    strategy = RecordingStrategy(edits_by_step={0: edits})
    await run(tmp_path, strategy, epochs=1)
    candidate = (tmp_path / "run" / "steps" / "0000" / "candidate.md").read_text()
    assert candidate == "# Capitals\n\n- France: Paris\n\n- Norway: Oslo\n- Japan: Tokyo\n"

    strategy = RecordingStrategy(edits_by_step={0: edits})
    await run(tmp_path, strategy, epochs=1, out="strict", optimizer={"edit_targets": "strict"})
    candidate = (tmp_path / "strict" / "steps" / "0000" / "candidate.md").read_text()
    assert candidate == "# Capitals\n\n- France: Paris\n- Norway: Oslo\n- Japan: Tokyo\n"
