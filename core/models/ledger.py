"""One usage ledger across all roles: calls, cache hits, tokens and cost, plus the cap.

Why the cap is checked *before* a call and not after: the engine must be able to stop at a
step boundary with everything spent so far recorded. A call that finds the cap reached
raises `BudgetExceeded` and spends nothing; calls already in flight finish and are counted,
so a run may overshoot the cap by at most the calls that were in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from core.models.types import BudgetExceeded, Usage

_FIELDS = ("calls", "cache_hits", "input_tokens", "output_tokens", "cost_usd")


def _price_of(prices: Mapping[str, Any], model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, from config `Price` objects or plain dicts."""
    price = prices.get(model)
    if price is None:
        return None
    if isinstance(price, Mapping):
        return float(price["input_per_mtok"]), float(price["output_per_mtok"])
    return float(price.input_per_mtok), float(price.output_per_mtok)


def cost_of(prices: Mapping[str, Any], model: str, input_tokens: int, output_tokens: int) -> float:
    price = _price_of(prices, model)
    if price is None:
        return 0.0
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


@dataclass(frozen=True)
class LedgerSnapshot:
    calls: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cap_tokens: int | None
    cap_cost_usd: float | None
    per_role: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class UsageLedger:
    def __init__(
        self,
        prices: Mapping[str, Any] | None = None,
        *,
        cap_tokens: int | None = None,
        cap_cost_usd: float | None = None,
    ):
        self.prices = dict(prices or {})
        self.cap_tokens = cap_tokens
        self.cap_cost_usd = cap_cost_usd
        self._per_role: dict[str, dict[str, float]] = {}
        self._unpriced: set[str] = set()
        self._lock = threading.Lock()

    def record(self, role: str, model: str, usage: Usage, cached: bool) -> None:
        """A finished call. A cache hit counts as a call and a hit, and costs nothing."""
        with self._lock:
            row = self._per_role.setdefault(role, dict.fromkeys(_FIELDS, 0))
            row["calls"] += 1
            if cached:
                row["cache_hits"] += 1
                return
            row["input_tokens"] += usage.input_tokens
            row["output_tokens"] += usage.output_tokens
            if usage.cost_usd is not None:
                row["cost_usd"] += usage.cost_usd  # the backend knows its own price
                return
            if _price_of(self.prices, model) is None:
                self._unpriced.add(model)
            row["cost_usd"] += cost_of(self.prices, model, usage.input_tokens, usage.output_tokens)

    @property
    def unpriced_models(self) -> list[str]:
        """Models that were used but have no price in `models.prices` (counted at $0)."""
        with self._lock:
            return sorted(self._unpriced)

    def _totals(self) -> dict[str, float]:
        totals = dict.fromkeys(_FIELDS, 0)
        for row in self._per_role.values():
            for key in _FIELDS:
                totals[key] += row[key]
        return totals

    def check_budget(self) -> None:
        """Raise BudgetExceeded if a cap is already reached."""
        with self._lock:
            totals = self._totals()
        tokens = int(totals["input_tokens"] + totals["output_tokens"])
        if self.cap_tokens is not None and tokens >= self.cap_tokens:
            raise BudgetExceeded(
                f"token budget reached: {tokens} of {self.cap_tokens} tokens used "
                "(raise budget.max_tokens and resume the run to continue)"
            )
        if self.cap_cost_usd is not None and totals["cost_usd"] >= self.cap_cost_usd:
            raise BudgetExceeded(
                f"cost budget reached: ${totals['cost_usd']:.4f} of ${self.cap_cost_usd:.4f} "
                "spent (raise budget.max_cost_usd and resume the run to continue)"
            )

    def snapshot(self) -> LedgerSnapshot:
        with self._lock:
            totals = self._totals()
            per_role = {role: dict(row) for role, row in self._per_role.items()}
        return LedgerSnapshot(
            calls=int(totals["calls"]),
            cache_hits=int(totals["cache_hits"]),
            input_tokens=int(totals["input_tokens"]),
            output_tokens=int(totals["output_tokens"]),
            cost_usd=float(totals["cost_usd"]),
            cap_tokens=self.cap_tokens,
            cap_cost_usd=self.cap_cost_usd,
            per_role=per_role,
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts, for a run's resume state (caps and prices come from the config)."""
        with self._lock:
            return {"per_role": {role: dict(row) for role, row in self._per_role.items()}}

    def restore(self, data: Mapping[str, Any]) -> None:
        """Replace the counts with those saved by `to_dict()` (resume)."""
        per_role = {
            str(role): {key: float(row.get(key, 0)) for key in _FIELDS}
            for role, row in dict(data.get("per_role", {})).items()
        }
        for row in per_role.values():
            for key in ("calls", "cache_hits", "input_tokens", "output_tokens"):
                row[key] = int(row[key])
        with self._lock:
            self._per_role = per_role

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        prices: Mapping[str, Any] | None = None,
        *,
        cap_tokens: int | None = None,
        cap_cost_usd: float | None = None,
    ) -> UsageLedger:
        ledger = cls(prices, cap_tokens=cap_tokens, cap_cost_usd=cap_cost_usd)
        ledger.restore(data)
        return ledger


# --------------------------------------------------------------------------- estimate


@dataclass(frozen=True)
class Estimate:
    """A pre-run estimate. `unpriced` lists models with no price (their cost counts as 0)."""

    input_tokens: int
    output_tokens: int
    cost_usd: float
    per_role: dict[str, dict[str, float]]
    unpriced: list[str]

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def estimate_cost(
    calls: Mapping[str, tuple[int, int, int]],
    models: Mapping[str, str],
    prices: Mapping[str, Any] | None = None,
) -> Estimate:
    """`calls[role] = (number of calls, input tokens each, output tokens each)`;
    `models[role]` = the model that role uses."""
    prices = prices or {}
    per_role: dict[str, dict[str, float]] = {}
    unpriced: set[str] = set()
    for role, (n, in_each, out_each) in calls.items():
        model = models.get(role, "")
        in_tok, out_tok = n * in_each, n * out_each
        if _price_of(prices, model) is None and n:
            unpriced.add(model)
        per_role[role] = {
            "calls": n,
            "input_tokens": in_tok,
            "output_tokens": out_tok,
            "cost_usd": cost_of(prices, model, in_tok, out_tok),
        }
    return Estimate(
        input_tokens=int(sum(r["input_tokens"] for r in per_role.values())),
        output_tokens=int(sum(r["output_tokens"] for r in per_role.values())),
        cost_usd=float(sum(r["cost_usd"] for r in per_role.values())),
        per_role=per_role,
        unpriced=sorted(unpriced),
    )
