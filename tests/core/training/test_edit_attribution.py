"""Per-edit acceptance (core/training/edit_attribution.py): an environment's rule drops the
edits its per-item scores do not support, and what is left is gated again, so a staged
candidate holds only supported edits and was scored itself. A scripted scorer stands in
for the rollouts (a TEST DOUBLE): item "a" passes when the skill holds every rule it
needs, item "b" is a guard that always passes."""

from __future__ import annotations

from types import SimpleNamespace

from core.skill.edits import Edit
from core.training.edit_attribution import keep_supported
from core.training.gate import GateDecision
from core.training.rollout_runner import GatedScore

BEFORE = {"a": 0.2, "b": 1.0}


class Rule:
    """Accept when "a" passes; support an edit whose rationale says "for a"; edits that
    both say so are rivals (which of them moved "a" is ambiguous)."""

    def __call__(self, before, after):
        return after["a"] >= 0.7 > before["a"], "a must pass"

    def attribute(self, edits, before, after, flips=None):
        moved = after["a"] > before["a"]
        return [
            (i, "no held-out evidence")
            for i, e in enumerate(edits)
            if not (moved and "for a" in e.rationale)
        ]

    def rivals(self, edits):
        claims = [i for i, e in enumerate(edits) if "for a" in e.rationale]
        return [claims] if len(claims) > 1 else []


class Scorer:
    def __init__(self, needs: tuple[str, ...]):
        self.needs = needs
        self.scored: list[str] = []

    async def score_with_gate(self, items, text, **_settings):
        self.scored.append(text)
        metrics = {"a": 1.0 if all(n in text for n in self.needs) else 0.2, "b": 1.0}
        decision = GateDecision(True, 0.6, sum(metrics.values()) / 2, 2, 2, 0, "mean")
        return GatedScore(decision, {}, metrics, 0, 2)


def run(needs: tuple[str, ...]):
    scorer = Scorer(needs)
    tr = SimpleNamespace(
        state=SimpleNamespace(best_items=dict(BEFORE), best_score=0.6),
        cfg=SimpleNamespace(optimizer=SimpleNamespace(edit_targets="first")),
        val_items=[],
        runner=scorer,
    )
    return tr, scorer


GOOD = Edit("append", "", "Log, never print.", "for a: the person corrected print")
IRRELEVANT = Edit("append", "", "Write commit messages in the imperative.", "a general habit")


async def _trim(tr, edits):
    text = "# Skill\n" + "".join(f"{e.content}\n" for e in edits)
    first = await tr.runner.score_with_gate([], text)
    return await keep_supported(
        tr, Rule(), "# Skill\n", text, edits, first, first.decision,
        step=0, gate_cfg=None, margin=0,
    )  # fmt: skip


async def test_an_unsupported_edit_is_dropped_and_the_rest_is_gated_again():
    tr, scorer = run(needs=("Log, never print.",))
    trimmed = await _trim(tr, [GOOD, IRRELEVANT])
    assert trimmed is not None and trimmed.decision.accepted
    assert trimmed.edits == [GOOD] and trimmed.candidate == "# Skill\nLog, never print.\n"
    assert scorer.scored[-1] == trimmed.candidate  # the staged text was scored itself
    assert [d["content"] for d in trimmed.dropped] == [IRRELEVANT.content]
    assert "re-gated without 1 edit(s)" in trimmed.decision.reason


async def test_no_supported_edit_rejects_without_another_scoring():
    tr, scorer = run(needs=("imperative",))
    trimmed = await _trim(tr, [IRRELEVANT])
    assert trimmed is not None and not trimmed.decision.accepted
    assert "no edit has held-out evidence" in trimmed.decision.reason
    assert len(scorer.scored) == 1


async def test_a_rest_that_loses_its_evidence_without_the_dropped_edit_is_rejected():
    # "a" passes only with both rules: without the unsupported one the rest fails it
    tr, _scorer = run(needs=("Log, never print.", "imperative"))
    trimmed = await _trim(tr, [GOOD, IRRELEVANT])
    assert trimmed is not None and not trimmed.decision.accepted
    assert trimmed.decision.reason.startswith("a must pass (re-gated without 1 edit(s)")


async def test_every_edit_supported_changes_nothing():
    tr, _scorer = run(needs=("Log, never print.",))
    assert await _trim(tr, [GOOD]) is None


CLAIMED = Edit("append", "", "Never hedge; say the likely answer.", "for a: short answers")


async def test_an_edit_claiming_evidence_it_did_not_earn_is_ablated_away():
    """Two edits name the same evidence: the one the candidate does as well without is
    dropped by an ablation (one more scoring), and what is left was scored."""
    tr, scorer = run(needs=("Log, never print.",))
    trimmed = await _trim(tr, [GOOD, CLAIMED])
    assert trimmed is not None and trimmed.decision.accepted
    assert trimmed.edits == [GOOD] and scorer.scored[-1] == trimmed.candidate
    [dropped] = trimmed.dropped
    assert dropped["content"] == CLAIMED.content and "(ablation)" in dropped["reason"]
    assert len(scorer.scored) == 2


async def test_rivals_that_are_both_needed_are_both_kept():
    tr, scorer = run(needs=("Log, never print.", "Never hedge"))
    assert await _trim(tr, [GOOD, CLAIMED]) is None
    assert len(scorer.scored) == 3  # the first scoring, then one ablation of each


class TwoClaims(Rule):
    """Items "a" and "b" each with edits claiming them ("for a", "for b")."""

    def __call__(self, before, after):
        return after["a"] >= 0.7 and after["b"] >= 0.7, "a and b must pass"

    def attribute(self, edits, before, after, flips=None):
        moved = {k for k in ("a", "b") if after[k] > before[k]}
        return [
            (i, "no held-out evidence")
            for i, e in enumerate(edits)
            if not any(f"for {k}" in e.rationale for k in moved)
        ]

    def rivals(self, edits):
        groups = [[i for i, e in enumerate(edits) if f"for {k}" in e.rationale] for k in "ab"]
        return [g for g in groups if len(g) > 1]


async def test_two_groups_of_rivals_are_ablated_each_within_its_own_group():
    """The second group's indices point into the edits as proposed, not as left after the
    first group's ablation dropped one."""
    good_b = Edit("append", "", "Answer yes or no first.", "for b: yes or no")
    claimed_b = Edit("append", "", "Be polite.", "for b: manners")

    class Both(Scorer):
        async def score_with_gate(self, items, text, **_settings):
            gated = await super().score_with_gate(items, text)
            gated.item_metrics["b"] = 1.0 if good_b.content in text else 0.2
            return gated

    scorer = Both(needs=(GOOD.content,))
    tr = SimpleNamespace(
        state=SimpleNamespace(best_items={"a": 0.2, "b": 0.2}, best_score=0.2),
        cfg=SimpleNamespace(optimizer=SimpleNamespace(edit_targets="first")),
        val_items=[],
        runner=scorer,
    )
    edits = [GOOD, CLAIMED, good_b, claimed_b]
    text = "# Skill\n" + "".join(f"{e.content}\n" for e in edits)
    first = await scorer.score_with_gate([], text)
    trimmed = await keep_supported(
        tr, TwoClaims(), "# Skill\n", text, edits, first, first.decision,
        step=0, gate_cfg=None, margin=0,
    )  # fmt: skip
    assert trimmed is not None and trimmed.decision.accepted
    assert trimmed.edits == [GOOD, good_b]
    assert [d["content"] for d in trimmed.dropped] == [CLAIMED.content, claimed_b.content]
