"""Typed engine events and the one stream they travel on.

The engine reports progress only by emitting these. The run log (`events.jsonl`), the
console logger and the TUI are ordinary subscribers, so a run started headless can be
followed or replayed by the TUI from the file alone. Each event serialises to one JSON
line with a `type` field; `event_from_dict` reverses it. Unknown fields from newer
versions are ignored when reading, so old readers survive new writers.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from core.plain_data import as_dict
from core.secrets import redacted_json


@dataclass(kw_only=True)
class Event:
    type: ClassVar[str] = "Event"
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **as_dict(self)}


@dataclass(kw_only=True)
class RunStarted(Event):
    """A run began or resumed: what it trains, on which models, and its shape."""

    type: ClassVar[str] = "RunStarted"
    run_id: str
    env: str
    strategy: str
    target_model: str
    optimizer_model: str
    epochs: int
    steps_per_epoch: int
    train_items: int
    val_items: int
    test_items: int
    resumed: bool = False
    start_step: int = 0  # first step this process will run (>0 when resuming)
    executor: str = ""  # where the rollouts run (run.executor): slots or the Ray cluster


@dataclass(kw_only=True)
class RolloutFinished(Event):
    """One item scored: a train minibatch item, a gate, baseline, slow-update, final-val
    or test rollout (`phase`)."""

    type: ClassVar[str] = "RolloutFinished"
    # phase: "train" (step minibatch), "gate" (candidate on val), "baseline" (initial on
    # val), "slow_update", "final_val", "test"
    phase: str
    step: int
    split: str
    skill_hash: str
    item_id: str
    task_type: str
    hard: float
    soft: float
    latency_s: float
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    prediction: str = ""
    # which skill a rollout scored when a phase scores several ("initial", "best", "final"
    # on test); empty otherwise, and in logs written before it existed
    skill_role: str = ""
    # the target's reply was cut at its token limit (finish_reason "length"): scored as
    # given, flagged so a wrong answer can be told from an unfinished one
    truncated: bool = False
    # true when this phase of this step already logged this result: the run's rollout
    # cache served it to a resumed run redoing the step (nothing was run again); readers
    # that count rollouts skip these. False in logs written before it existed.
    replayed: bool = False


@dataclass(kw_only=True)
class ReflectionText(Event):
    """One optimizer call's text: an analyst (failure or success), a merge, the ranking,
    the slow update, the meta notes or the fewshot strategy (`kind`)."""

    type: ClassVar[str] = "ReflectionText"
    step: int
    # kind: "failure", "success", "merge", "rank", "slow_update", "meta", "fewshot"
    kind: str
    group: int
    text: str


@dataclass(kw_only=True)
class CandidateProposed(Event):
    """A step's candidate skill: the edits, the diff from the current skill and whether
    free validation passed."""

    type: ClassVar[str] = "CandidateProposed"
    step: int
    candidate_hash: str
    parent_hash: str
    edits: list[dict[str, Any]]
    diff: str  # unified diff, current skill -> candidate
    valid: bool = True
    problems: list[str] = field(default_factory=list)  # free validation failures


@dataclass(kw_only=True)
class EditApplied(Event):
    """The outcome of one proposed edit on the current skill (`status`: applied,
    target_not_found, ambiguous, protected, invalid)."""

    type: ClassVar[str] = "EditApplied"
    step: int
    index: int
    op: str
    status: str  # applied, target_not_found, ambiguous, protected, invalid
    reason: str = ""


@dataclass(kw_only=True)
class GateDecided(Event):
    """The validation gate's decision on a candidate, with the scores it compared."""

    type: ClassVar[str] = "GateDecided"
    step: int
    accepted: bool
    best_before: float
    candidate_score: float | None  # None when decided early (partial score is in `reason`)
    items_scored: int
    items_total: int
    rollouts_saved: int
    items_improved: int = 0
    items_regressed: int = 0
    reason: str = ""
    staged_ref: str | None = None  # commit sha or file path of the staged candidate
    # What was gated: "step" (a step's candidate) or "slow_update" (an epoch end's
    # guidance, numbered with the epoch's last step, after that step's own decision).
    source: str = "step"
    # Rejected early: the most the candidate could still have scored (its bound).
    at_most: float | None = None
    # gate.significance: the paired test's one-sided p over the items it counted (those
    # whose score changed); None when the gate did not test.
    p_value: float | None = None
    items_counted: int | None = None


@dataclass(kw_only=True)
class LearningRateDecided(Event):
    """A step's autonomous learning rate (train.optimizer.lr_control: autonomous): `count`
    of the ranked `pool` applied (0: no candidate this step); `asked` is the model's own
    number before clamping, None when its reply was unusable (`error` says why)."""

    type: ClassVar[str] = "LearningRateDecided"
    step: int
    count: int
    pool: int
    asked: int | None = None
    confidence: str = ""
    reasoning: str = ""
    risks: str = ""
    error: str = ""


@dataclass(kw_only=True)
class StepFinished(Event):
    """A step ended: its train scores, the best val so far and whether its candidate was
    accepted."""

    type: ClassVar[str] = "StepFinished"
    step: int
    epoch: int
    train_hard: float
    train_soft: float
    best_val: float
    accepted: bool
    edit_budget: int


@dataclass(kw_only=True)
class EpochFinished(Event):
    """An epoch ended: the best val, the slow update's outcome and the meta notes."""

    type: ClassVar[str] = "EpochFinished"
    epoch: int
    best_val: float
    slow_update_accepted: bool | None = None
    meta_notes: str = ""


@dataclass(kw_only=True)
class BudgetUpdated(Event):
    """Running totals of calls, cache hits, tokens and cost, per role and per stage,
    with the caps."""

    type: ClassVar[str] = "BudgetUpdated"
    calls: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cap_tokens: int | None = None
    cap_cost_usd: float | None = None
    per_role: dict[str, dict[str, float]] = field(default_factory=dict)
    # rollout, baseline, gate, analyst, merge, rank, slow_update, meta, test, ...
    per_stage: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(kw_only=True)
class RunFinished(Event):
    """The run ended: `finished`, `stopped` (budget cap or user stop; resumable) or
    `waiting` (for handoff answers; resumable), with its scores."""

    type: ClassVar[str] = "RunFinished"
    # status: "finished", "stopped" (budget cap / user stop; resumable) or "waiting"
    # (for handoff answers, listed by the AnswersWaiting event before it; resumable)
    status: str
    baseline_val: float
    best_val: float
    final_val: float | None = None
    test: dict[str, float] = field(default_factory=dict)  # {"initial": .., "best": .., ...}
    reason: str = ""


@dataclass(kw_only=True)
class FinalSkillChecked(Event):
    """The finish's check of the final (current) skill against the best one, when they
    differ (core/training/finish.py): `kept` says whether it became the best and was
    staged; `slow_updates` names the ungated slow updates (by step) that are in the final
    skill, so a rejection says they stayed in the running skill but not in the result.
    `outcome` is "kept", "rejected" (scored, not better) or "invalid" (never scored)."""

    type: ClassVar[str] = "FinalSkillChecked"
    step: int
    outcome: str
    final_val: float | None
    best_val: float
    slow_updates: list[int] = field(default_factory=list)
    reason: str = ""


@dataclass(kw_only=True)
class RunFailed(Event):
    """The run failed with an error (exit 1 or 2)."""

    type: ClassVar[str] = "RunFailed"
    error: str
    step: int | None = None


@dataclass(kw_only=True)
class AnswersWaiting(Event):
    """The run waits for handoff answers (status `waiting`, exit 3): every prompt still
    without a usable answer, each {file, prompt, answer, role, kind, shape, state, reason}."""

    type: ClassVar[str] = "AnswersWaiting"
    folder: str
    prompts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(kw_only=True)
class Notice(Event):
    """Something the user should know that changes no result (e.g. the response cache was
    unusable and the run goes on uncached)."""

    type: ClassVar[str] = "Notice"
    text: str


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        RunStarted,
        RolloutFinished,
        ReflectionText,
        CandidateProposed,
        EditApplied,
        GateDecided,
        LearningRateDecided,
        StepFinished,
        EpochFinished,
        BudgetUpdated,
        RunFinished,
        FinalSkillChecked,
        RunFailed,
        AnswersWaiting,
        Notice,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event | None:
    """The event a JSON object describes, or None for an unknown type."""
    cls = EVENT_TYPES.get(data.get("type", ""))
    if cls is None:
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


Subscriber = Callable[[Event], None]


class EventBus:
    """Synchronous fan-out. A subscriber that raises is reported once and dropped, so a
    broken view can never stop a paid training run."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        self._subscribers.append(fn)
        return lambda: self._subscribers.remove(fn) if fn in self._subscribers else None

    def emit(self, event: Event) -> None:
        for fn in list(self._subscribers):
            try:
                fn(event)
            except Exception as exc:  # noqa: BLE001 - isolation is the point
                self._subscribers.remove(fn)
                print(
                    f"skillopt: event subscriber {fn!r} failed and was removed: {exc}",
                    file=sys.stderr,
                )


class JsonlEventLog:
    """Appends each event as one line and flushes, so a tailing reader sees it at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        self._fh.write(redacted_json(event.to_dict(), indent=None) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def read_events(path: str | Path) -> Iterator[Event]:
    """Events of a log; a torn last line (a crash mid-write) is skipped, not an error."""
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            event = _parse_line(line)
            if event is not None:
                yield event


def _parse_line(line: str) -> Event | None:
    line = line.strip()
    if not line:
        return None
    try:
        return event_from_dict(json.loads(line))
    except (json.JSONDecodeError, TypeError):
        return None


class EventTail:
    """Incremental reader for a log another process is appending to: each `poll()`
    returns the complete lines added since the last call, at most `max_bytes` of them
    (None: all). A bounded read is what lets a reader keep up in steps: a log written at
    10,000 events/s never hands its follower a whole backlog at once; `behind` says
    there is more to read right away."""

    def __init__(self, path: str | Path, max_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.behind = False
        self._offset = 0
        self._partial = b""

    def poll(self) -> list[Event]:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read(-1 if self.max_bytes is None else self.max_bytes)
                self._offset = fh.tell()
        except FileNotFoundError:
            return []
        self.behind = self.max_bytes is not None and len(chunk) == self.max_bytes
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()  # incomplete until a newline arrives
        events = (_parse_line(line.decode("utf-8", "replace")) for line in lines)
        return [e for e in events if e is not None]
