import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config import GateConfig
from core.training.gate import TIE_TOLERANCE, EarlyGate, compare_items, item_metric


def run_gate(values, best, early=True):
    """Feed values until the gate decides; returns the decision."""
    gate = EarlyGate(best, len(values), early_decide=early)
    for value in values:
        decision = gate.decided()
        if decision is not None:
            return decision
        gate.add(value)
    return gate.finish()


def test_item_metric_modes():
    assert item_metric(1.0, 0.2, GateConfig(metric="hard")) == 1.0
    assert item_metric(1.0, 0.2, GateConfig(metric="soft")) == 0.2
    assert item_metric(1.0, 0.2, GateConfig(metric="mixed", soft_weight=0.25)) == pytest.approx(0.8)
    assert item_metric(1.0, 1.0, GateConfig(metric="mixed", soft_weight=0.3)) <= 1.0


def test_accepts_strictly_better():
    decision = run_gate([1, 1, 0, 1], best=0.5)
    assert decision.accepted
    assert decision.candidate_score == 0.75
    assert decision.items_scored == 4 and decision.rollouts_saved == 0
    assert decision.best_before == 0.5
    assert "accepted" in decision.reason


def test_tie_rejects():
    decision = run_gate([1, 0, 1, 0], best=0.5, early=False)
    assert not decision.accepted
    assert decision.candidate_score == 0.5
    assert "ties reject" in decision.reason


def test_float_tie_rejects():
    # best = 7/30 stored as a float; another 7-of-30 candidate is a tie, not a win.
    values = [1.0] * 7 + [0.0] * 23
    assert not run_gate(values, best=7 / 30, early=False).accepted
    assert not run_gate([0.1, 0.2], best=0.15, early=False).accepted
    assert run_gate([1.0] * 8 + [0.0] * 22, best=7 / 30, early=False).accepted


def test_early_reject_saves_rollouts():
    gate = EarlyGate(best=0.75, items_total=4)
    gate.add(0.0)
    # Even three more perfect items give 0.75, which only ties the best: decided now.
    decision = gate.decided()
    assert decision is not None and not decision.accepted
    assert decision.items_scored == 1 and decision.rollouts_saved == 3


def test_early_reject_exact_point():
    gate = EarlyGate(best=0.5, items_total=4)
    gate.add(0.0)
    assert gate.decided() is None  # up to 0.75 still possible
    gate.add(0.0)
    decision = gate.decided()  # at most 0.5: a tie at best
    assert decision is not None and not decision.accepted
    assert decision.candidate_score is None
    assert decision.items_scored == 2 and decision.rollouts_saved == 2
    assert "early" in decision.reason
    assert gate.finish() == decision


def test_never_accepts_early():
    gate = EarlyGate(best=0.0, items_total=3)
    gate.add(1.0)
    gate.add(1.0)
    assert gate.decided() is None
    gate.add(1.0)
    assert gate.finish().accepted and gate.finish().candidate_score == 1.0


def test_best_of_one_rejects_before_any_item():
    decision = EarlyGate(best=1.0, items_total=5).decided()
    assert decision is not None and decision.rollouts_saved == 5


def test_without_early_decide_all_items_are_scored():
    gate = EarlyGate(best=1.0, items_total=2, early_decide=False)
    assert gate.decided() is None
    gate.add(0.0)
    assert gate.decided() is None
    gate.add(0.0)
    decision = gate.finish()
    assert (
        not decision.accepted and decision.candidate_score == 0.0 and decision.rollouts_saved == 0
    )


def test_minus_infinity_best_accepts_anything_complete():
    gate = EarlyGate(best=-math.inf, items_total=2)
    gate.add(0.0)
    assert gate.decided() is None
    gate.add(0.0)
    assert gate.finish().accepted


def test_no_items_rejects():
    decision = EarlyGate(best=0.0, items_total=0).finish()
    assert not decision.accepted and decision.candidate_score is None


def test_bad_inputs():
    gate = EarlyGate(best=0.0, items_total=1)
    with pytest.raises(ValueError):
        gate.add(1.5)
    with pytest.raises(ValueError):
        gate.add(float("nan"))
    gate.add(0.5)
    with pytest.raises(ValueError):
        gate.add(0.5)
    with pytest.raises(ValueError):
        EarlyGate(best=float("nan"), items_total=1)
    undecided = EarlyGate(best=0.0, items_total=2)
    with pytest.raises(RuntimeError):
        undecided.finish()


def test_tolerance_does_not_swallow_real_improvements():
    # One more correct item out of 1,000 is a real improvement.
    values = [1.0] * 501 + [0.0] * 499
    assert run_gate(values, best=0.5).accepted
    assert run_gate([0.500001], best=0.5).accepted


_value = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)


@st.composite
def gate_cases(draw):
    values = draw(st.lists(_value, min_size=1, max_size=40))
    kind = draw(st.sampled_from(["random", "tie", "k_over_n"]))
    if kind == "random":
        best = draw(st.floats(min_value=-0.5, max_value=1.5, allow_nan=False))
    elif kind == "tie":
        best = float(sum(Fraction(v) for v in values) / len(values))
    else:
        best = draw(st.integers(0, len(values))) / len(values)
    return values, best


@given(gate_cases(), st.randoms())
def test_early_decision_equals_full_decision(case, rnd):
    values, best = case
    rnd.shuffle(values)
    early = run_gate(values, best, early=True)
    full = run_gate(values, best, early=False)
    assert early.accepted == full.accepted
    assert early.rollouts_saved == early.items_total - early.items_scored
    assert full.items_scored == len(values) and full.rollouts_saved == 0
    if early.accepted:
        assert early.candidate_score == full.candidate_score
        assert early.items_scored == len(values)
    mean = sum(Fraction(v) for v in values) / len(values)
    assert full.accepted == (mean > Fraction(best) + TIE_TOLERANCE)


def test_compare_items():
    before = {"a": 0.0, "b": 1.0, "c": 0.5, "d": 0.0}
    after = {"a": 1.0, "b": 0.0, "c": 0.5, "e": 1.0}
    assert compare_items(before, after) == (1, 1)
    assert compare_items({}, after) == (0, 0)
