"""One usage ledger across all roles: calls, cache hits, tokens and cost, plus the cap.

Why the cap is checked *before* a call and not after: the engine must be able to stop at a
step boundary with everything spent so far recorded. A call that finds the cap reached
raises `BudgetExceeded` and spends nothing; calls already in flight finish and are counted,
so a run may overshoot the cap by at most the calls that were in flight.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from core.models.priority_pool import off_critical_path
from core.models.spend_journal import SpendJournal
from core.models.types import BudgetExceeded, Usage

# What a call answered inside a provider batch costs, as a share of the interactive price:
# OpenAI's Batch API and Anthropic's Message Batches both bill input and output tokens at
# 50 % of the standard rates (their pricing pages: "50% discount" / "50% of standard API
# prices"). A backend that reports its own cost is taken at its word instead.
BATCH_PRICE_FACTOR = 0.5

_FIELDS = ("calls", "cache_hits", "input_tokens", "output_tokens", "cost_usd")

# The stage of the loop a call belongs to (rollout, analyst, merge, rank, slow_update, gate,
# test, ...). A context variable, so tasks a phase starts inherit it and no call signature
# has to carry it.
STAGE: contextvars.ContextVar[str] = contextvars.ContextVar("skillopt_stage", default="other")


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the model calls made inside the block (and in tasks it starts) under `name`."""
    token = STAGE.set(name)
    try:
        yield
    finally:
        STAGE.reset(token)


def _add_to(rows: dict[str, dict[str, float]], key: object, entry: Mapping[str, Any]) -> None:
    row = rows.setdefault(str(key), dict.fromkeys(_FIELDS, 0))
    row["calls"] += 1
    if entry.get("cached"):
        row["cache_hits"] += 1
        return
    row["input_tokens"] += int(entry.get("input_tokens", 0))
    row["output_tokens"] += int(entry.get("output_tokens", 0))
    row["cost_usd"] += _spent(entry.get("cost_usd", 0.0))


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


def _spent(value: Any) -> float:
    """A journal entry's cost; one an older version wrote as NaN or negative counts 0."""
    try:
        cost = float(value)
    except (TypeError, ValueError):
        return 0.0
    return cost if math.isfinite(cost) and cost >= 0 else 0.0


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
    per_stage: dict[str, dict[str, float]] = field(default_factory=dict)

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
        cap_calls: int | None = None,
    ):
        self.prices = dict(prices or {})
        self.cap_tokens = cap_tokens
        self.cap_cost_usd = cap_cost_usd
        # Model calls actually sent (cache hits are free): a cap on agent runs and requests
        # for backends whose cost is per call (a subscription CLI), or a night's allowance.
        self.cap_calls = cap_calls
        self._per_role: dict[str, dict[str, float]] = {}
        self._per_stage: dict[str, dict[str, float]] = {}
        self._off_path: dict[str, dict[str, float]] = {}  # this process's early work, by role
        self._unpriced: set[str] = set()
        self._reported: dict[str, tuple[float, int]] = {}  # model -> (sum, calls) reported
        self._lock = threading.Lock()
        self._in_flight = 0  # calls holding a reservation (reserve_call), not yet recorded
        self.journal: SpendJournal | None = None

    def record(
        self,
        role: str,
        model: str,
        usage: Usage,
        cached: bool,
        *,
        cancelled: bool = False,
        estimated: bool = False,
        served_model: str | None = None,
        batch: bool = False,
    ) -> None:
        """A finished call. A cache hit counts as a call and a hit, and costs nothing. A
        call cancelled in flight, or abandoned (a timeout, a stream that stalled or broke
        off), counts with the usage it was estimated at (the provider bills it). So does an
        `estimated` call, one whose backend reported an impossible cost: priced by the
        table, or, for a model without a price whose backend prices its own calls, at the
        mean of the costs it reported so far. With a journal attached the call is appended
        (and a paid one fsync'd) before this returns, so before the reply is used."""
        reported = usage.cost_usd
        if reported is not None and not (math.isfinite(reported) and reported >= 0):
            reported, estimated = None, True  # never a cost that moves or disables the cap
        if cached:
            cost = 0.0
        elif reported is not None:
            cost = reported  # the backend knows its own price (agent CLIs report it)
        elif estimated and _price_of(self.prices, model) is None:
            with self._lock:
                total, calls = self._reported.get(model, (0.0, 0))
            cost = total / calls if calls else 0.0
        else:
            cost = cost_of(self.prices, model, usage.input_tokens, usage.output_tokens)
            if batch:
                cost *= BATCH_PRICE_FACTOR
        entry = {
            "role": role,
            "model": model,
            "stage": STAGE.get(),
            "cached": cached,
            "input_tokens": 0 if cached else usage.input_tokens,
            "output_tokens": 0 if cached else usage.output_tokens,
            "cost_usd": cost,
        }
        if served_model and served_model != model:  # the version the provider says served it
            entry["served_model"] = served_model
        if batch:
            entry["batch"] = True
        if cancelled:
            entry["cancelled"] = True
        if estimated:
            entry["estimated"] = True
        elif reported is not None and not cached:
            entry["reported"] = True
        with self._lock:
            self._apply(entry)
            if off_critical_path():  # early work: no stage of the current step made it
                _add_to(self._off_path, role, entry)
            if not cached and reported is None and _price_of(self.prices, model) is None:
                self._unpriced.add(model)
        if self.journal is not None:
            # fsync what may cost money; a free model's call (the embedded model, a test
            # double: priced at zero) is written but not forced to disk, at 4 ms a call.
            free = _price_of(self.prices, model) == (0.0, 0.0)
            self.journal.append(entry, durable=not cached and not free)

    def _apply(self, entry: Mapping[str, Any]) -> None:
        if entry.get("reported"):
            total, calls = self._reported.get(str(entry["model"]), (0.0, 0))
            self._reported[str(entry["model"])] = (total + _spent(entry["cost_usd"]), calls + 1)
        for rows, key in ((self._per_role, entry["role"]), (self._per_stage, entry["stage"])):
            _add_to(rows, key, entry)

    def per_role_on_path(self) -> dict[str, dict[str, float]]:
        """Each role's counts without the calls early work made in this process (see
        core/models/priority_pool.py): what a step's stages spent, with the baseline or a
        test evaluation running beside them."""
        with self._lock:
            out = {role: dict(row) for role, row in self._per_role.items()}
            for role, off in self._off_path.items():
                for key in _FIELDS:
                    out[role][key] -= off[key]
        return out

    def attach_journal(self, journal: SpendJournal) -> None:
        """Replay what `journal` already holds (every call of every earlier process of the
        run, including a killed one's), then append every new call to it."""
        entries = journal.read()
        with self._lock:
            if entries:
                self._per_role, self._per_stage, self._reported = {}, {}, {}
                for entry in entries:
                    entry.setdefault("stage", "other")
                    self._apply(entry)
        self.journal = journal

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
        """Raise BudgetExceeded if a cap is already reached (calls in flight count against
        the call cap: they will be paid)."""
        with self._lock:
            self._check()

    @contextlib.contextmanager
    def reserve_call(self) -> Iterator[None]:
        """Hold one of budget.max_calls while a call is in flight, until it is recorded.
        Checking only what was recorded let N concurrent calls all pass and go up to N - 1
        past the cap; a reservation is taken under the lock, so they cannot."""
        with self._lock:
            self._check()
            self._in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1

    def _check(self) -> None:
        """Raise BudgetExceeded if a cap is reached; the caller holds the lock."""
        totals, in_flight = self._totals(), self._in_flight
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
        sent = int(totals["calls"] - totals["cache_hits"])
        if self.cap_calls is not None and sent + in_flight >= self.cap_calls:
            flying = f", {in_flight} in flight" if in_flight else ""
            raise BudgetExceeded(
                f"call budget reached: {sent} of {self.cap_calls} model calls sent{flying} "
                "(raise budget.max_calls and resume the run to continue)"
            )

    def snapshot(self) -> LedgerSnapshot:
        with self._lock:
            totals = self._totals()
            per_role = {role: dict(row) for role, row in self._per_role.items()}
            per_stage = {name: dict(row) for name, row in self._per_stage.items()}
        return LedgerSnapshot(
            calls=int(totals["calls"]),
            cache_hits=int(totals["cache_hits"]),
            input_tokens=int(totals["input_tokens"]),
            output_tokens=int(totals["output_tokens"]),
            cost_usd=float(totals["cost_usd"]),
            cap_tokens=self.cap_tokens,
            cap_cost_usd=self.cap_cost_usd,
            per_role=per_role,
            per_stage=per_stage,
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts, for a run's resume state (caps and prices come from the config)."""
        with self._lock:
            return {
                "per_role": {role: dict(row) for role, row in self._per_role.items()},
                "per_stage": {name: dict(row) for name, row in self._per_stage.items()},
            }

    def restore(self, data: Mapping[str, Any]) -> None:
        """Replace the counts with those saved by `to_dict()` (resume of a run that has no
        spend journal; one that has replays it instead, see attach_journal)."""
        per_role, per_stage = _rows(data.get("per_role")), _rows(data.get("per_stage"))
        with self._lock:
            self._per_role, self._per_stage = per_role, per_stage

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


def _rows(data: Any) -> dict[str, dict[str, float]]:
    rows = {
        str(name): {key: float(row.get(key, 0)) for key in _FIELDS}
        for name, row in dict(data or {}).items()
    }
    for row in rows.values():
        for key in ("calls", "cache_hits", "input_tokens", "output_tokens"):
            row[key] = int(row[key])
    return rows


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
