"""The headless face of a training run: a rich progress bar with ETA on stderr and one line
per gate decision. An ordinary event subscriber, like the run log and the TUI; it renders
the same facts they do and nothing else.

When stderr is not a terminal (a log file, CI, nohup) the bar draws nothing, and a run
could be silent for many minutes between "starting" and its first gate decision: there a
"progress:" line is written every `progress_every` seconds instead.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from core.run.events import (
    BudgetUpdated,
    EpochFinished,
    Event,
    FinalSkillChecked,
    GateDecided,
    LearningRateDecided,
    Notice,
    RolloutFinished,
    RunFailed,
    RunFinished,
    RunStarted,
    StepFinished,
)
from core.secrets import redact
from core.words import counted
from skillopt_tui.run_words import activity, rollout_step

PROGRESS_EVERY_S = 30.0
# An ETA from fewer calls than this is noise (the first replies include warm-up).
MIN_CALLS_FOR_ETA = 10


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.3f}"


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class ConsoleLogger:
    """Subscribe with `bus.subscribe(logger)`; call `close()` when the run ends."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        quiet: bool = False,
        progress_every: float = PROGRESS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = Console(file=stream or sys.stderr, highlight=False, soft_wrap=True)
        self.quiet = quiet
        self.progress_every = progress_every
        self.clock = clock
        self.started_at: float | None = None
        self.start_step = 0
        self.calls = 0
        # The run's planned model calls (an upper bound, core.run.estimate), when the caller
        # knows it: the ETA of a run that has not finished a step yet comes from it.
        self.expected_calls: int | None = None
        # (clock, calls) at the first call's reply: the call rate is measured from here, so
        # the embedded server's start-up and the first prompt's warm-up do not inflate it.
        self._first_call: tuple[float, int] | None = None
        self._ticker: threading.Thread | None = None
        self._stop_ticking = threading.Event()
        self.progress: Progress | None = None
        self.task = None
        self.step = 0  # steps done (the progress bar's count)
        self.where = ""  # what the run does now, in the run directory's numbering
        self.val_items = 0
        self.baseline_done = 0
        self.gated_step: int | None = None  # last step with a gate decision
        self.lr_step: int | None = None  # last step with an autonomous learning-rate decision
        self.total = 0
        self.rollouts = 0
        self.phase: tuple = ()  # (phase, step, skill role) of the rollouts being counted
        self.cost = ""

    # ------------------------------------------------------------------ output
    def line(self, text: str) -> None:
        if not self.quiet:
            self.console.print(redact(text), markup=False)

    def notice(self, text: str) -> None:
        self.line(f"note: {text}")

    def _describe(self) -> str:
        where = self.where or "starting"
        has_count = self.rollouts and not self.where.startswith("baseline")  # it has its n/N
        extra = f" · {counted(self.rollouts, 'rollout')}" if has_count else ""
        return where + extra + (f" · {self.cost}" if self.cost else "")

    def progress_line(self) -> str:
        """Phase, steps done of the total, model calls, elapsed time and ETA, in one line."""
        elapsed = self.clock() - self.started_at if self.started_at is not None else 0.0
        steps_run = self.step - self.start_step
        eta = "eta —"
        rate = self._seconds_per_call()
        if self.expected_calls and rate is not None:
            left = max(self.expected_calls - self.calls, 0)
            eta = f"eta ≤ {_duration(rate * left)}"
        elif self.expected_calls and self.calls:
            eta = "eta — (measuring the call rate)"
        elif steps_run > 0:
            eta = f"eta {_duration(elapsed / steps_run * (self.total - self.step))}"
        calls = counted(self.calls, "model call")
        if self.expected_calls:
            calls = f"{self.calls}/≤{self.expected_calls} model calls"
        return (
            f"progress: {self._describe()} · {self.step}/{self.total} steps done · {calls}"
            f" · {_duration(elapsed)} elapsed · {eta}"
        )

    def _seconds_per_call(self) -> float | None:
        """Seconds per call since the first reply, once enough calls have been seen."""
        if self._first_call is None:
            return None
        since, calls_then = self._first_call
        measured = self.calls - calls_then
        if measured < MIN_CALLS_FOR_ETA:
            return None
        return (self.clock() - since) / measured

    def _tick(self) -> None:
        while not self._stop_ticking.wait(self.progress_every):
            self.line(self.progress_line())

    def _refresh(self) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, description=self._describe())

    # ------------------------------------------------------------------ events
    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def _on_RunStarted(self, e: RunStarted) -> None:
        self.total = e.epochs * e.steps_per_epoch
        self.step = e.start_step
        self.val_items = e.val_items
        verb = f"resuming at step {e.start_step}" if e.resumed else "starting"
        self.line(
            f"run {e.run_id}: {verb} · env {e.env} ({e.train_items} train / {e.val_items} val / "
            f"{e.test_items} test) · strategy {e.strategy} · target {e.target_model} · "
            f"optimizer {e.optimizer_model} · {counted(e.epochs, 'epoch')} × "
            f"{counted(e.steps_per_epoch, 'step')}"
            + (f" · rollouts: {e.executor}" if e.executor else "")
        )
        self.started_at, self.start_step = self.clock(), e.start_step
        if self.quiet:
            return
        if not self.console.is_terminal:  # the bar would draw nothing: lines instead
            self._stop_ticking.clear()
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()
            return
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("steps done"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task(self._describe(), total=self.total, completed=self.step)

    def _on_RolloutFinished(self, e: RolloutFinished) -> None:
        if e.phase == "baseline":
            self.baseline_done += 1
        where = activity(e, (self.baseline_done, self.val_items))
        here = (e.phase, rollout_step(e), e.skill_role)
        if here != self.phase:
            self.phase, self.rollouts = here, 0
        self.where = where
        self.rollouts += 1
        self._refresh()

    def _on_GateDecided(self, e: GateDecided) -> None:
        # An epoch end's slow update is numbered with the epoch's last step, whose own
        # decision came first: name it, so "step N: rejected" is not followed by "step N:
        # accepted".
        what = f"step {e.step}"
        if e.source in ("slow_update", "merge"):  # a Pareto merge likewise follows its step
            what = f"{e.source.replace('_', ' ')} (after step {e.step})"
        else:
            self.gated_step = e.step
        if e.accepted:
            text = (
                f"{what}: accepted · val {_fmt(e.best_before)} → {_fmt(e.candidate_score)}"
                f" · items +{e.items_improved}/−{e.items_regressed}"
            )
            if e.staged_ref:
                text += f" · staged {e.staged_ref}"
        elif e.candidate_score is not None:
            text = f"{what}: rejected · val {_fmt(e.candidate_score)} vs best {_fmt(e.best_before)}"
        elif e.items_scored == 0:
            text = f"{what}: rejected · not scored · {e.reason}"
        else:
            bound = f"val ≤ {_fmt(e.at_most)}" if e.at_most is not None else "val not reached"
            text = (
                f"{what}: rejected early · {bound} vs best {_fmt(e.best_before)}"
                f" · after {e.items_scored}/{e.items_total} items (saved {e.rollouts_saved})"
            )
        if e.p_value is not None:  # the significance gate's test, as its own field
            changed = counted(e.items_counted or 0, "changed item")
            text += f" · sign test p={e.p_value:.3g} over {changed}"
        self.line(text)

    def _on_LearningRateDecided(self, e: LearningRateDecided) -> None:
        self.lr_step = e.step
        said = f"unusable reply ({e.error})" if e.error else f"confidence {e.confidence or '—'}"
        text = f"step {e.step}: learning rate · apply {e.count} of {e.pool} · {said}"
        self.line(text + (" · no candidate this step" if e.count == 0 else ""))

    def _on_StepFinished(self, e: StepFinished) -> None:
        self.step = e.step + 1
        self.phase, self.where = (), f"step {e.step} done"
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=self.step, description=self._describe())
        if e.edit_budget == 0:
            if self.lr_step != e.step:  # an autonomous 0 has said so in its own line
                self.line(f"step {e.step}: edit budget 0, no edits")
        elif self.gated_step != e.step:
            self.line(f"step {e.step}: no candidate (no usable edits; see steps/{e.step:04d}/)")

    def _on_EpochFinished(self, e: EpochFinished) -> None:
        text = f"epoch {e.epoch + 1} done · best val {_fmt(e.best_val)}"
        if e.slow_update_accepted is not None:
            text += f" · slow update {'accepted' if e.slow_update_accepted else 'rejected'}"
        self.line(text)

    def _on_BudgetUpdated(self, e: BudgetUpdated) -> None:
        if self._first_call is None and e.calls > 0:
            self._first_call = (self.clock(), e.calls)
        self.calls = e.calls
        tokens = e.input_tokens + e.output_tokens
        cap = f"/{e.cap_tokens}" if e.cap_tokens else ""
        self.cost = f"{tokens}{cap} tok ${e.cost_usd:.4f}"
        self._refresh()

    def _on_FinalSkillChecked(self, e: FinalSkillChecked) -> None:
        slow = ", ".join(str(s) for s in e.slow_updates)
        if e.outcome == "kept":
            self.line(
                f"final skill kept · val {_fmt(e.final_val)} vs best {_fmt(e.best_val)} · staged"
            )
            return
        why = (
            f"val {_fmt(e.final_val)} vs best {_fmt(e.best_val)}"
            if e.outcome == "rejected"
            else e.reason
        )
        text = f"final skill not kept · {why} · the best skill is the result"
        if slow:
            text += f" (the slow update of step {slow} stayed in the running skill only)"
        self.line(text)

    def _on_RunFinished(self, e: RunFinished) -> None:
        self.close()
        if e.status == "finished":
            tests = ", ".join(f"{k} {v:.3f}" for k, v in e.test.items())
            self.line(
                f"finished · val baseline {_fmt(e.baseline_val)} → best {_fmt(e.best_val)}"
                + (f" · test {tests}" if tests else "")
            )
        else:
            self.line(f"{e.status} · best val {_fmt(e.best_val)} · {e.reason}")

    def _on_Notice(self, e: Notice) -> None:
        self.notice(e.text)

    def _on_RunFailed(self, e: RunFailed) -> None:
        self.close()
        self.line(
            f"failed at step {e.step}: {e.error}" if e.step is not None else f"failed: {e.error}"
        )

    def close(self) -> None:
        self._stop_ticking.set()
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join()
            self._ticker = None
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
