"""Usage ledger arithmetic, caps, resume round trip and the pre-run estimate."""

from __future__ import annotations

import pytest

from core.config import Price
from core.models.ledger import UsageLedger, estimate_cost
from core.models.types import BudgetExceeded, Usage

PRICES = {"big": Price(input_per_mtok=3.0, output_per_mtok=15.0)}


def test_totals_per_role_cost_and_hits():
    ledger = UsageLedger(PRICES)
    ledger.record("target", "big", Usage(1000, 100), cached=False)
    ledger.record("target", "big", Usage(1000, 100), cached=True)
    ledger.record("optimizer", "other", Usage(10, 20), cached=False)
    snap = ledger.snapshot()
    assert (snap.calls, snap.cache_hits, snap.input_tokens, snap.output_tokens) == (3, 1, 1010, 120)
    assert snap.cost_usd == pytest.approx((1000 * 3 + 100 * 15) / 1e6)
    assert snap.per_role["target"]["calls"] == 2 and snap.per_role["optimizer"]["cost_usd"] == 0
    assert ledger.unpriced_models == ["other"]


def test_cap_is_checked_before_the_next_call():
    ledger = UsageLedger(cap_tokens=100)
    ledger.record("target", "m", Usage(60, 39), cached=False)
    ledger.check_budget()  # 99 < 100: still allowed
    ledger.record("target", "m", Usage(1, 0), cached=False)
    with pytest.raises(BudgetExceeded, match="budget.max_tokens"):
        ledger.check_budget()


def test_resume_round_trip_restores_counts():
    ledger = UsageLedger(PRICES, cap_cost_usd=1.0)
    ledger.record("judge", "big", Usage(500, 50), cached=False)
    ledger.record("judge", "big", Usage(0, 0), cached=True)
    restored = UsageLedger.from_dict(ledger.to_dict(), PRICES, cap_cost_usd=1.0)
    assert restored.snapshot() == ledger.snapshot()


def test_estimate_multiplies_calls_and_flags_unpriced_models():
    estimate = estimate_cost(
        {"target": (100, 200, 10), "optimizer": (5, 4000, 1000)},
        {"target": "big", "optimizer": "mystery"},
        PRICES,
    )
    assert estimate.input_tokens == 100 * 200 + 5 * 4000
    assert estimate.output_tokens == 100 * 10 + 5 * 1000
    assert estimate.cost_usd == pytest.approx((20_000 * 3 + 1_000 * 15) / 1e6)
    assert estimate.unpriced == ["mystery"]


def test_call_cap_counts_calls_sent_not_cache_hits():
    ledger = UsageLedger({}, cap_calls=2)
    ledger.record("target", "m", Usage(1, 1), cached=False)
    ledger.record("target", "m", Usage(1, 1), cached=True)  # free: not a call sent
    ledger.check_budget()
    ledger.record("judge", "m", Usage(1, 1), cached=False)
    with pytest.raises(BudgetExceeded, match="call budget reached: 2 of 2 .*budget.max_calls"):
        ledger.check_budget()
