"""A run directory's event log turned into what the Run screen shows.

The TUI follows `events.jsonl` and nothing else, so a run started in another terminal, a
run started by the TUI and a finished run (replay) look the same. `RunFeed.apply` folds a
batch of events into a `FeedUpdate`: the new rows and the few summary values that changed.
A burst becomes a few updates of one bounded batch each (not one per event, nor one for a
whole backlog), which is what keeps the screen responsive when a run writes thousands of
rollouts a second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.run.events import (
    BudgetUpdated,
    CandidateProposed,
    EditApplied,
    EpochFinished,
    Event,
    EventTail,
    FinalSkillChecked,
    GateDecided,
    LearningRateDecided,
    ReflectionText,
    RolloutFinished,
    RunFailed,
    RunFinished,
    RunStarted,
    StepFinished,
)
from skillopt_tui.run_words import activity

EVENTS_FILE = "events.jsonl"
# The most of the log one poll reads (~300 events, a few ms to parse): the screen folds in
# one bounded batch at a time, so a key press waits behind at most one batch, never behind
# a whole backlog.
BATCH_BYTES = 128 * 1024
CATCH_UP_S = 0.02  # the wait between polls while behind the log or the UI

# Phases whose rollouts may arrive while the baseline is still being scored (early work,
# README "What runs early"): they do not mean the baseline is done.
BESIDE_BASELINE = frozenset({"baseline", "train", "test"})


@dataclass(frozen=True)
class RunHeader:
    run_id: str = ""
    env: str = ""
    strategy: str = ""
    target_model: str = ""
    optimizer_model: str = ""
    epochs: int = 0
    steps_per_epoch: int = 0
    start_step: int = 0
    val_items: int = 0
    executor: str = ""  # where the rollouts run ("" in logs written before it was said)

    @property
    def total_steps(self) -> int:
        return self.epochs * self.steps_per_epoch


@dataclass(frozen=True)
class StepPoint:
    """One point of the score timeline: the gate's view of a step."""

    step: int
    epoch: int
    best_val: float
    candidate_score: float | None
    accepted: bool
    train_hard: float
    ts: float
    # False when the step had no candidate to gate (no edit proposed or applied): neither
    # kept nor rejected, and the chart says so with a marker of its own
    gated: bool = True


@dataclass(frozen=True)
class RunStatus:
    status: str = "live"  # live | finished | failed | stopped
    baseline_val: float | None = None
    best_val: float | None = None
    final_val: float | None = None
    reason: str = ""
    # baseline rollouts seen / val items: the header shows "baseline 3/30…" until the
    # baseline is complete, never a partial mean as if it were the score
    baseline_done: int = 0
    baseline_total: int = 0


@dataclass
class FeedUpdate:
    """What one batch of events changed. Lists hold only new items; the other fields are
    None when unchanged."""

    header: RunHeader | None = None
    rollouts: list[RolloutFinished] = field(default_factory=list)
    reflections: list[ReflectionText] = field(default_factory=list)
    gates: list[GateDecided] = field(default_factory=list)
    final_checks: list[FinalSkillChecked] = field(default_factory=list)  # the finish's
    edits: list[EditApplied] = field(default_factory=list)
    lr_decisions: list[LearningRateDecided] = field(default_factory=list)  # autonomous LR
    candidate: CandidateProposed | None = None  # the latest
    candidates: list[CandidateProposed] = field(default_factory=list)  # every new one
    steps: list[StepPoint] | None = None  # the whole timeline, when it changed
    budget: BudgetUpdated | None = None
    status: RunStatus | None = None
    eta_s: float | None = None
    activity: str | None = None  # what the run did last ("step 2 gate"), when it changed
    events: int = 0
    # when the run wrote its latest event (the event's own ts): a live run quiet since then
    # is waiting on a call, and the screen says for how long
    last_event_ts: float | None = None

    @property
    def empty(self) -> bool:
        return self.events == 0

    def merge(self, newer: FeedUpdate) -> FeedUpdate:
        """This update followed by `newer`, as one (new rows appended, newer values win).
        The rows are appended to this update's own lists (the follower's pending batch,
        not yet shared): merging stays linear however long the screen is busy."""

        def pick(old, new):
            return old if new is None else new

        for rows in ("rollouts", "reflections", "gates", "final_checks", "edits"):
            getattr(self, rows).extend(getattr(newer, rows))
        self.lr_decisions.extend(newer.lr_decisions)
        self.candidates.extend(newer.candidates)
        return FeedUpdate(
            header=pick(self.header, newer.header),
            rollouts=self.rollouts,
            reflections=self.reflections,
            gates=self.gates,
            final_checks=self.final_checks,
            edits=self.edits,
            lr_decisions=self.lr_decisions,
            candidate=pick(self.candidate, newer.candidate),
            candidates=self.candidates,
            steps=pick(self.steps, newer.steps),
            budget=pick(self.budget, newer.budget),
            status=pick(self.status, newer.status),
            eta_s=newer.eta_s
            if newer.status is not None or newer.steps is not None
            else self.eta_s,
            activity=pick(self.activity, newer.activity),
            events=self.events + newer.events,
            last_event_ts=pick(self.last_event_ts, newer.last_event_ts),
        )


class RunFeed:
    """Folds events into run state. Not thread-safe: one owner (its RunFollower)."""

    def __init__(self) -> None:
        self.header = RunHeader()
        self.steps: list[StepPoint] = []
        self.status = RunStatus()
        self.budget: BudgetUpdated | None = None
        self.candidate: CandidateProposed | None = None
        self._pending_scores: dict[int, float | None] = {}
        self._baseline: list[float] = []
        self._baseline_complete = False  # every val item scored, or a later phase began
        self._step_times: list[float] = []
        self._started_ts: float | None = None
        # Rows shown per rollout (and outcome), and how often this process emitted it: a
        # resumed run (a handoff round, a budget stop) redoes its step and replays the same
        # rollouts from the rollout cache; the table shows each once (issue 19: "61
        # rollouts" for a night of 13), while repeats within one process (gate.repeats) stay.
        # The engine marks such replays (`replayed`); the per-process count is for logs
        # written before it did.
        self._rows: Counter[tuple] = Counter()
        self._this_process: Counter[tuple] = Counter()

    def _replayed(self, event: RolloutFinished) -> bool:
        """Whether this rollout repeats, with the same outcome, one an earlier process of
        the run already showed (then it is not a new row). A rollout the engine marks
        `replayed` is a new row only if its first showing is missing from the log."""
        key = (
            event.phase,
            event.step,
            event.split,
            event.skill_hash,
            event.item_id,
            event.skill_role,
            event.hard,
            event.soft,
            event.prediction,
        )
        if event.replayed and self._rows[key]:
            return True
        self._this_process[key] += 1
        if self._this_process[key] <= self._rows[key]:
            return True
        self._rows[key] += 1
        return False

    def apply(self, events: Iterable[Event]) -> FeedUpdate:
        update = FeedUpdate()
        steps_changed = status_changed = False
        for event in events:
            update.events += 1
            update.last_event_ts = event.ts
            if isinstance(event, RolloutFinished):
                if not self._replayed(event):
                    update.rollouts.append(event)
                if event.phase == "baseline" and not self._baseline_complete:
                    self._baseline.append(event.hard)
                    total = self.header.val_items
                    self._baseline_complete = bool(total) and len(self._baseline) >= total
                    status_changed = True
                elif (
                    event.phase not in BESIDE_BASELINE
                    and self._baseline
                    and not self._baseline_complete
                ):
                    self._baseline_complete = status_changed = True
            elif isinstance(event, ReflectionText):
                update.reflections.append(event)
            elif isinstance(event, CandidateProposed):
                self.candidate = update.candidate = event
                update.candidates.append(event)
            elif isinstance(event, EditApplied):
                update.edits.append(event)
            elif isinstance(event, LearningRateDecided):
                update.lr_decisions.append(event)
            elif isinstance(event, GateDecided):
                update.gates.append(event)
                if event.source == "step":  # a slow update comes after its step's point
                    self._pending_scores[event.step] = event.candidate_score
                if not self._baseline:
                    self._baseline.append(event.best_before)
                    status_changed = True
                if not self._baseline_complete:
                    self._baseline_complete = status_changed = True
            elif isinstance(event, FinalSkillChecked):
                update.final_checks.append(event)
            elif isinstance(event, StepFinished):
                self._on_step(event)
                steps_changed = status_changed = True
            elif isinstance(event, EpochFinished):
                self.status = replace(self.status, best_val=event.best_val)
                status_changed = True
            elif isinstance(event, BudgetUpdated):
                self.budget = update.budget = event
            elif isinstance(event, RunStarted):
                self._on_start(event)
                update.header = self.header
                status_changed = True
            elif isinstance(event, RunFinished):
                self.status = RunStatus(
                    event.status, event.baseline_val, event.best_val, event.final_val, event.reason
                )
                status_changed = True
            elif isinstance(event, RunFailed):
                self.status = replace(self.status, status="failed", reason=event.error)
                status_changed = True
        if steps_changed:
            update.steps = list(self.steps)
            self._baseline_complete = self._baseline_complete or bool(self._baseline)
        if update.rollouts:
            update.activity = activity(
                update.rollouts[-1], (len(self._baseline), self.header.val_items)
            )
        if status_changed:
            # the baseline rollouts' mean once all of them are in, live or ended (a partial
            # mean is no score: Home shows none either); an ended run keeps its
            # RunFinished value
            live = self.status.status == "live"
            if not self._baseline_complete and (live or self.status.baseline_val is None):
                self.status = replace(self.status, baseline_val=None)
            elif self._baseline and (live or self.status.baseline_val is None):
                self.status = replace(self.status, baseline_val=self._baseline_value())
            self.status = replace(
                self.status,
                baseline_done=len(self._baseline),
                baseline_total=self.header.val_items,
            )
            update.status = self.status
        if steps_changed or status_changed:
            update.eta_s = self.eta_s()
        return update

    def _on_start(self, event: RunStarted) -> None:
        self.header = RunHeader(
            event.run_id,
            event.env,
            event.strategy,
            event.target_model,
            event.optimizer_model,
            event.epochs,
            event.steps_per_epoch,
            event.start_step,
            event.val_items,
            event.executor,
        )
        if not self._baseline_complete:
            self._baseline = []  # a baseline cut short is redone from its first item
        if self.status.status != "live":
            self.status = replace(self.status, status="live", reason="")  # resumed
        self._started_ts = event.ts
        self._step_times = []
        self._this_process = Counter()

    def _on_step(self, event: StepFinished) -> None:
        gated = event.step in self._pending_scores
        point = StepPoint(
            event.step,
            event.epoch,
            event.best_val,
            self._pending_scores.pop(event.step, None),
            event.accepted,
            event.train_hard,
            event.ts,
            gated,
        )
        if not self.steps or self.steps[-1].step < event.step:
            self.steps.append(point)  # the usual case, in constant time at any rate
        else:  # a step again (a resumed run): replaced where it was
            self.steps = [p for p in self.steps if p.step != event.step] + [point]
            self.steps.sort(key=lambda p: p.step)
        self.status = replace(self.status, best_val=event.best_val)
        self._step_times.append(event.ts)

    def _baseline_value(self) -> float | None:
        return sum(self._baseline) / len(self._baseline) if self._baseline else None

    def eta_s(self) -> float | None:
        """Seconds left, from the event timestamps (never the wall clock, so a replay shows
        the same ETA every time): mean step duration of this process times steps left."""
        if self.status.status != "live" or not self.header.total_steps:
            return None
        if self._started_ts is None or not self._step_times:
            return None
        done_here = len(self._step_times)
        per_step = (self._step_times[-1] - self._started_ts) / done_here
        left = max(self.header.total_steps - len(self.steps), 0)
        return per_step * left


def _process_alive(run_dir: Path) -> bool:
    """Whether a process holds the run directory's lock (the trainer's own test)."""
    from core.run.directory import lock_owner

    return lock_owner(run_dir) is not None


class RunFollower:
    """Polls a run's `events.jsonl`, handing each non-empty batch (already folded by a
    private RunFeed) to `deliver`. Driven by a timer on the app's own thread, every
    `next_wait_s()`: parsing in a thread would not run beside the UI (the GIL), it would
    only make every wake-up of the event loop wait for the thread's turn.

    The log is read at most `batch_bytes` at a time. While `ready()` says the UI is still
    busy with the last batch, nothing more is read (the log itself is the queue): however
    fast a run writes, at most one bounded update waits for the UI, and the follower
    catches up batch by batch, polling again at once while it is behind.

    A log without a terminal event is "live" only while a process holds the run's lock;
    otherwise the run was interrupted (killed, machine off) and is shown so."""

    def __init__(
        self,
        run_dir: Path,
        deliver: Callable[[FeedUpdate], None],
        interval_s: float = 0.3,
        alive: Callable[[Path], bool] = _process_alive,
        ready: Callable[[], bool] = lambda: True,
        batch_bytes: int = BATCH_BYTES,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.tail = EventTail(self.run_dir / EVENTS_FILE, max_bytes=batch_bytes)
        self.feed = RunFeed()
        self.deliver = deliver
        self.interval_s = interval_s
        self.alive = alive
        self.ready = ready
        self._pending: FeedUpdate | None = None
        self._shown: RunStatus | None = None

    def poll_once(self) -> FeedUpdate:
        if self._pending is not None and not self.ready():
            return FeedUpdate()  # the UI has not taken the last batch: read nothing yet
        update = self.feed.apply(self.tail.poll())
        shown = self.feed.status
        if shown.status == "live" and not self.alive(self.run_dir):
            shown = replace(shown, status="interrupted")
        if shown != self._shown or update.status is not None:
            self._shown = update.status = shown
            update.eta_s = self.feed.eta_s() if shown.status == "live" else None
            update.events = max(update.events, 1)
        if not update.empty:
            self._pending = update if self._pending is None else self._pending.merge(update)
        if self._pending is not None and self.ready():
            pending, self._pending = self._pending, None
            self.deliver(pending)
        return update

    def next_wait_s(self) -> float:
        """At once (nearly) while behind the log or waiting for the UI; else the interval."""
        behind = self.tail.behind or self._pending is not None
        return min(CATCH_UP_S, self.interval_s) if behind else self.interval_s


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"
