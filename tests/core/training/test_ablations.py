"""Ablations of the published method as configs of the same loop (issue 15), on the
hand-checkable scenario with the skill-sensitive TEST DOUBLE target."""

from __future__ import annotations

import json

import pytest

from core.run.events import GateDecided
from core.skill.edits import Edit
from tests.core.training.test_method_fidelity import RecordingStrategy, run


async def test_gate_disabled_accepts_every_candidate_and_marks_it(tmp_path):
    summary, events = await run(tmp_path, gate={"enabled": False})
    gates = [e for e in events if isinstance(e, GateDecided)]
    # Step 1's candidate ties the best (3/5): the strict gate rejects it, this one does not
    # (and step 3 then finds its examples already in the skill: no edits).
    assert [(g.step, g.accepted) for g in gates] == [(0, True), (1, True)]
    assert all(g.reason.startswith("gate disabled") for g in gates)
    # As published, only a candidate that beats the best becomes best (and is staged).
    assert [r["step"] for r in summary.staged] == [0]
    evidence = json.loads((tmp_path / "run" / "staged" / "step-0000.json").read_text())
    assert evidence["gate"] == "disabled" and "(gate disabled)" in evidence["summary"]
    gate = json.loads((tmp_path / "run" / "steps" / "0001" / "gate.json").read_text())
    assert gate["mode"] == "disabled" and gate["candidate_score"] == pytest.approx(0.6)
    assert gate["accepted"] is True and gate["became_best"] is False


async def test_gate_disabled_keeps_the_best_so_test_best_differs_from_final(tmp_path):
    # Step 1 deletes a fact line the val and test items need: worse, current anyway.
    worse = RecordingStrategy(edits_by_step={1: [Edit(op="delete", target="- Japan: Tokyo")]})
    summary, _ = await run(tmp_path, worse, gate={"enabled": False})
    gate = json.loads((tmp_path / "run" / "steps" / "0001" / "gate.json").read_text())
    assert gate["accepted"] is True and gate["became_best"] is False
    assert gate["candidate_score"] < gate["best_before"]
    best = (tmp_path / "run" / "best_skill.md").read_text()
    assert "- Japan: Tokyo" in best  # the best is still step 0's skill
    test = summary.test  # test "best" is step 0's skill, not the final one
    assert test["best"]["skill_hash"] != test["final"]["skill_hash"]
    assert summary.best_val == pytest.approx(gate["best_before"])


async def test_strict_gate_marks_its_mode_too(tmp_path):
    await run(tmp_path)
    gate = json.loads((tmp_path / "run" / "steps" / "0001" / "gate.json").read_text())
    assert gate["mode"] == "strict" and gate["accepted"] is False


@pytest.mark.parametrize("enabled", [True, False])
async def test_rejected_buffer_can_be_switched_off(tmp_path, enabled):
    useless = Edit("append", "", "Be careful.", "r")
    strategy = RecordingStrategy(edits_by_step={0: [useless]})
    await run(tmp_path, strategy, epochs=1, optimizer={"rejected_buffer": enabled})
    shown = strategy.contexts[1].rejected_buffer
    assert ("Be careful." in shown) is enabled
    if not enabled:
        assert shown == ""


async def test_history_and_per_step_artifacts(tmp_path):
    summary, _ = await run(tmp_path)
    run_dir = tmp_path / "run"
    history = json.loads((run_dir / "history.json").read_text())
    assert history["baseline_val"] == 0.0
    rows = history["steps"]
    assert [(r["step"], r["accepted"]) for r in rows] == [
        (0, True),
        (1, False),
        (2, False),
        (3, False),
    ]
    assert rows[0]["candidate_score"] == pytest.approx(0.6) and rows[0]["gate_mode"] == "strict"
    assert rows[0]["stages"]["rollout"]["tokens"]["target"]["calls"] == 3
    assert rows[0]["stages"]["gate"]["tokens"]["target"]["calls"] == 5
    pairs = json.loads((run_dir / "steps" / "0001" / "slow_update_pairs.json").read_text())
    assert len(pairs) == 6 and {p["outcome"] for p in pairs} == {"improved", "still_failing"}
