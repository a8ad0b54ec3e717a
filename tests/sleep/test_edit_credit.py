"""A flipped check is evidence only for the edit whose preference it was mined from
(sleep/night/check_origins.py, sleep/night/preference_gate.py): a held-out item corrected
for two preferences ("add a test with every change", "all timestamps in UTC") whose
add-a-test check flips credits the test rule, not the UTC rule whose check passed before
and after (issue 37, greenhouse round 6). The tasks, their checks and preferences are
mined for real; the replays are a scripted scorer (a TEST DOUBLE) over the real per-edit
acceptance and preference gate."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from core.environment.contract import RolloutResult, TaskItem
from core.skill.document import skill_hash
from core.skill.edits import Edit
from core.training.check_flips import CheckFlips
from core.training.edit_attribution import keep_supported
from core.training.gate import GateDecision
from core.training.rollout_cache import RolloutCache
from core.training.rollout_runner import GatedScore
from sleep.mine.correction_checks import checks_for
from sleep.mine.preferences import group_preferences
from sleep.mine.structural_checks import structural_checks
from sleep.mine.tasks import Check, Correction, MinedTask
from sleep.night.check_origins import check_origins
from sleep.night.held_out import held_out_occurrences
from sleep.night.preference_gate import PreferenceGate

TESTS, UTC = "add a test with every change", "all timestamps in UTC please"


def mined(text: str) -> list[Check]:
    """The checks mining writes for a correction of an agentic task."""
    return checks_for(text, agentic=True) + structural_checks(text, None, agentic=True)


[TEST_CHECK] = [c.describe() for c in mined(TESTS)]
[UTC_CHECK] = [c.describe() for c in mined(UTC)]
CURRENT = "# Skill\n"
RULES = {"tests": "Add a test with every change.", "utc": "Use timezone-aware UTC times."}


def alert_task() -> MinedTask:
    said = [Correction(TESTS, "s1", "claude", "2026-12-01T10:00:00Z"),
            Correction(UTC, "s2", "claude", "2026-12-02T10:00:00Z")]  # fmt: skip
    checks = [*mined(TESTS), *mined(UTC)]
    return MinedTask("alert", "add alert_line()", "/p", rubric="tests; UTC", kind="agentic",
                     checks=checks, corrections=said)  # fmt: skip


def result(item: str, soft: float, checks: dict[str, bool]) -> RolloutResult:
    return RolloutResult(item, "agentic", item, "", "reply", float(soft >= 0.7), soft, "judge",
                         [], checks=checks)  # fmt: skip


# The current skill: no test added (its check fails), UTC already used (its check passes).
BEFORE = {"alert": 0.4, "g": 1.0}
BEFORE_CHECKS = {"alert": {TEST_CHECK: False, UTC_CHECK: True}, "g": {}}
AFTER = {"alert": 0.9, "g": 1.0}
AFTER_CHECKS = {"alert": {TEST_CHECK: True, UTC_CHECK: True}, "g": {}}
ITEMS = [TaskItem("alert", "agentic", "add alert_line()", ""), TaskItem("g", "advice", "q", "")]


class Scorer:
    """The val replays (a TEST DOUBLE): the alert replay adds a test when the text holds
    the test rule; the UTC rule changes nothing (UTC was used already)."""

    def __init__(self) -> None:
        self.cache = RolloutCache(None, target_key="t", env_key="sleep")
        for item in ITEMS:
            self.cache.put(skill_hash(CURRENT), "val",
                           result(item.id, BEFORE[item.id], BEFORE_CHECKS[item.id]))  # fmt: skip

    async def score_with_gate(self, items, text, **_settings):
        scores, checks = (
            (AFTER, AFTER_CHECKS) if RULES["tests"] in text else (BEFORE, BEFORE_CHECKS)
        )
        results = {i.id: result(i.id, scores[i.id], checks[i.id]) for i in ITEMS}
        decision = GateDecision(True, 0.7, 0.95, 2, 2, 0, "rule")
        return GatedScore(decision, results, {i: r.soft for i, r in results.items()}, 0, 2)


def gate_for(tasks: list[MinedTask]) -> tuple[PreferenceGate, dict[str, str]]:
    preferences = group_preferences(tasks)
    roles = {"alert": "occurrence", "g": "guard"}
    gate = PreferenceGate(roles, 0.7, held_out_occurrences(preferences, roles),
                          check_origins(tasks, preferences))  # fmt: skip
    ids = {}
    for pref in preferences:
        ids["tests" if "test" in pref.text else "utc"] = pref.id
    return gate, ids


def trim(runner: Scorer, gate: PreferenceGate, edits: list[Edit]):
    """The real per-edit acceptance of a candidate holding both rules."""
    tr = SimpleNamespace(
        state=SimpleNamespace(best_items=dict(BEFORE), best_score=0.7),
        cfg=SimpleNamespace(optimizer=SimpleNamespace(edit_targets="first")),
        val_items=ITEMS,
        runner=runner,
    )
    text = CURRENT + "\n".join(RULES.values()) + "\n"
    first = asyncio.run(runner.score_with_gate(ITEMS, text))
    return asyncio.run(keep_supported(
        tr, gate, CURRENT, text, edits, first, first.decision, step=1, gate_cfg=None, margin=0,
    ))  # fmt: skip


def test_each_check_is_tied_to_the_preference_it_was_mined_from():
    """Fails on the old code: no check had an origin (the module did not exist)."""
    task = alert_task()
    preferences = group_preferences([task])
    origins = check_origins([task], preferences)
    by_text = {p.id: p.text for p in preferences}
    assert {c: [by_text[p] for p in ids] for c, ids in origins["alert"].items()} == {
        TEST_CHECK: [TESTS],
        UTC_CHECK: [UTC],
    }


def test_a_flipped_check_credits_only_the_edit_whose_preference_it_came_from():
    """Fails on the old code: the add-a-test check flipping on the shared item was
    counted for the UTC rule too, so both rules were staged."""
    gate, ids = gate_for([alert_task()])
    edits = [Edit("append", "", RULES["tests"], f"addresses {ids['tests']}"),
             Edit("append", "", RULES["utc"], f"addresses {ids['utc']}")]  # fmt: skip
    trimmed = trim(Scorer(), gate, edits)
    assert trimmed is not None, "both rules were kept"
    assert [d["content"] for d in trimmed.dropped] == [RULES["utc"]]
    assert [e.content for e in trimmed.edits] == [RULES["tests"]]
    assert trimmed.decision.accepted, trimmed.decision.reason
    flips = {"alert": CheckFlips(up=(TEST_CHECK,))}
    assert "no held-out evidence" in gate.kept_because(edits[1], BEFORE, AFTER, flips)


class JudgeOnlyScorer(Scorer):
    """The val replays (a TEST DOUBLE) where no check flips: the judge scores the alert
    replay higher when the text holds the test rule, whatever else it holds."""

    async def score_with_gate(self, items, text, **_settings):
        scores = AFTER if RULES["tests"] in text else BEFORE
        results = {i.id: result(i.id, scores[i.id], {}) for i in ITEMS}
        decision = GateDecision(True, 0.7, 0.95, 2, 2, 0, "rule")
        return GatedScore(decision, results, {i: r.soft for i, r in results.items()}, 0, 2)


def test_a_judge_only_rise_on_a_shared_item_is_ablated_not_credited_to_every_edit():
    """Fails on the old code: the alert item carries both preferences and rose past the
    pass mark by the judge alone, so both rules were credited and staged."""
    task = alert_task()
    task.checks = []  # nothing mechanical: only the judge tells
    gate, ids = gate_for([task])
    edits = [Edit("append", "", RULES["tests"], f"addresses {ids['tests']}"),
             Edit("append", "", RULES["utc"], f"addresses {ids['utc']}")]  # fmt: skip
    trimmed = trim(JudgeOnlyScorer(), gate, edits)
    assert trimmed is not None, "both rules were kept"
    assert [d["content"] for d in trimmed.dropped] == [RULES["utc"]]
    assert "ablation" in trimmed.dropped[0]["reason"]
    assert [e.content for e in trimmed.edits] == [RULES["tests"]]
    assert trimmed.decision.accepted, trimmed.decision.reason


def test_a_check_the_miner_model_worded_is_tied_by_its_words():
    """Fails on the old code (no origins): the greenhouse alert_line task's `def test_`
    check, written by the miner model, is no check mining would derive from the words."""
    task = alert_task()
    task.checks = [Check("diff_adds", "def test_"), Check("diff_not_adds", r"utcnow\(")]
    preferences = group_preferences([task])
    by_text = {p.id: p.text for p in preferences}
    origins = check_origins([task], preferences)["alert"]
    assert [by_text[p] for p in origins[Check("diff_adds", "def test_").describe()]] == [TESTS]
    assert Check("diff_not_adds", r"utcnow\(").describe() not in origins  # unknown: no word shared


def test_the_drop_reason_names_the_other_preferences_check_not_the_judges_rounding():
    """The greenhouse night after edit-credit: the UTC rule was dropped "rose only by a
    judge's rounding or stayed short of passing: alert 0.57 → 1.00", though the item went
    from failing to passing; what lifted it was the test preference's check."""
    gate, ids = gate_for([alert_task()])
    utc_rule = Edit("append", "", RULES["utc"], f"addresses {ids['utc']}")
    flips = {"alert": CheckFlips(up=(TEST_CHECK,))}
    why = gate.kept_because(utc_rule, BEFORE, AFTER, flips)
    assert "rose with another preference's flipped check: alert" in why, why
    assert "rounding" not in why, why
