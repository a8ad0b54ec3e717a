"""An environment's own acceptance rule (core/training/candidate_gate.env_gate_rule): it
replaces "the mean beats the best" on a full scoring, and a decision made early (no full
score) is left as the gate made it; the items that moved are what the commit lists."""

from __future__ import annotations

from types import SimpleNamespace

from core.environment.contract import TaskItem
from core.skills_repo.repo_stager import MOVED_SHOWN, moved_lines
from core.training.candidate_gate import env_gate_rule, moved_items, ruled
from core.training.gate import GateDecision


def _decision(score: float | None, accepted: bool) -> GateDecision:
    return GateDecision(accepted, 0.5, score, 2, 2, 0, "mean")


def test_the_rule_decides_a_full_scoring_and_leaves_an_early_reject():
    def rule(before, after):
        return after["b"] > before["b"], "b must improve"

    full = ruled(rule, _decision(0.9, True), {"a": 0.0, "b": 1.0}, {"a": 1.0, "b": 0.8})
    assert (full.accepted, full.reason) == (False, "b must improve")
    early = _decision(None, False)
    assert ruled(rule, early, {}, {}) is early
    assert ruled(None, _decision(0.9, True), {}, {}).accepted is True
    assert env_gate_rule(SimpleNamespace(env=object())) is None
    assert env_gate_rule(SimpleNamespace(env=SimpleNamespace(gate_rule=rule))) is rule


def test_the_items_that_moved_are_listed_with_what_decided_them():
    items = [TaskItem(i, "t", f"request {i}", "", {"replay": "chat"}) for i in "abc"]
    results = {"a": SimpleNamespace(explanation="judge 1.00: fixed")}
    gated = SimpleNamespace(item_metrics={"a": 1.0, "b": 0.5}, results=results)
    moved = moved_items(items, {"a": 0.2, "b": 0.5, "c": 0.1}, gated)
    assert moved == [
        {"id": "a", "question": "request a", "replay": "chat", "before": 0.2, "after": 1.0,
         "decided_by": "judge 1.00: fixed"}
    ]  # fmt: skip
    lines = moved_lines(moved)
    assert lines[1:] == [
        "Items that moved:",
        "- a [chat] 0.20 -> 1.00: 'request a'; decided by judge 1.00: fixed",
    ]
    many = moved_lines([{**moved[0], "id": str(n)} for n in range(MOVED_SHOWN + 2)])
    assert many[-1] == "- and 2 more" and moved_lines([]) == []
