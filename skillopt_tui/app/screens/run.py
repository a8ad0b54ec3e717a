"""Run: one run, live or replayed, from its `events.jsonl` alone."""

from __future__ import annotations

import gc
import shlex
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Static, TabbedContent, TabPane

from core.run.events import LearningRateDecided
from core.words import counted
from skillopt_tui.app.messages import RunFeedUpdated
from skillopt_tui.app.run_feed import (
    FeedUpdate,
    RunFollower,
    RunHeader,
    RunStatus,
    format_eta,
)
from skillopt_tui.app.train_launcher import resume_command
from skillopt_tui.app.widgets.budget_footer import BudgetFooter
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.diff_view import DiffView
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.app.widgets.gate_log import GateLog, gate_scores
from skillopt_tui.app.widgets.lr_log import LearningRateLog, lr_line
from skillopt_tui.app.widgets.reflection_log import ReflectionLog
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from skillopt_tui.app.widgets.score_chart import ScoreChart
from skillopt_tui.app.widgets.trajectory_screen import TrajectoryScreen, find_record
from skillopt_tui.app.worker_errors import LIST_KEYS, AppScreen

QUIET_S = 30  # a live run without an event this long is waiting on a call: say for how long
# Events absorbed between two gc.freeze() calls (see RunScreen._freeze_survivors)
FREEZE_EVERY_EVENTS = 10_000
RESUMABLE = {"stopped", "interrupted", "waiting"}  # waiting: for handoff answers
STATUS_STYLE = {
    "live": "bold green",
    "finished": "cyan",
    "failed": "bold red",
    "stopped": "yellow",
    "waiting": "yellow",
}


def header_text(
    run_dir: Path, header: RunHeader, status: RunStatus, stopping: bool = False
) -> Text:
    """`stopping`: a stop was asked and the run has not ended: said next to its status,
    and kept until the run ends, not only in a passing notice."""
    run_id = header.run_id or run_dir.name
    parts: list = [(run_id, "bold"), "  ", (status.status, STATUS_STYLE.get(status.status, ""))]
    if stopping and status.status == "live":
        parts.append((" · stopping after this call", "bold yellow"))
    if status.baseline_val is not None:
        best = "—" if status.best_val is None else f"{status.best_val:.2f}"
        parts.append(f"  val {status.baseline_val:.2f} → {best}")
    elif status.baseline_done:  # a partial mean is no score: say how far the baseline is
        total = f"/{status.baseline_total}" if status.baseline_total else ""
        parts.append((f"  baseline {status.baseline_done}{total}…", "yellow"))
    if status.reason:
        parts.append((f"  {status.reason}", "red" if status.status == "failed" else "dim"))
    if header.env:
        parts += [
            "  ",
            (header.env, "cyan"),
            f" · {header.strategy} · target "
            f"{header.target_model} · optimizer {header.optimizer_model}",
        ]
        if header.executor:
            parts.append(f" · rollouts: {header.executor}")
    return Text.assemble(*parts)


def gate_verdict(gate) -> Text:
    """A step's gate decision in words, for the candidate's title."""
    if gate is None:
        return Text("not gated yet", style="yellow")
    if gate.accepted:
        return Text(f"kept {gate_scores(gate)}", style="bold green")
    return Text(f"rejected {gate_scores(gate)}", style="bold red")


class RunScreen(AppScreen):
    # 1/2/3 are in the tab titles ("Rollouts (1)"), so the footer leaves them out
    AUTO_FOCUS = "#rollouts-table"  # Enter/↑/↓/t act on the rollouts from the start
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("1", "tab('rollouts')", "Rollouts", show=False, tooltip="Every rollout of the run"),
        Binding(
            "2",
            "tab('reflection')",
            "Reflection",
            show=False,
            tooltip="The optimizer's reflections",
        ),
        Binding(
            "3", "tab('candidate')", "Candidate", show=False, tooltip="The latest candidate's diff"
        ),
        Binding(
            "4",
            "tab('lr')",
            "Learning rate",
            show=False,
            tooltip="Each step's autonomous learning-rate decision",
        ),
        Binding("t", "trajectory", "Trajectory", tooltip="The selected rollout in full"),
        Binding(
            "comma",
            "candidate(-1)",
            "Prev candidate",
            show=False,
            tooltip="The previous step's candidate, with its gate decision",
        ),
        Binding(
            "full_stop",
            "candidate(1)",
            "Next candidate",
            show=False,
            tooltip="The next step's candidate, with its gate decision",
        ),
        Binding(
            "f", "filter", "Filter", show=False, tooltip="Show the rollouts of some phases or steps"
        ),
        Binding(
            "p",
            "pause",
            "Pause",
            show=False,
            tooltip="Hold the rollouts still (the run goes on); p again shows what came, marked",
        ),
        Binding("p", "resume_feed", "Unpause", tooltip="Show the rollouts that came, marked"),
        # x, as Sleep's "Stop night" (s opens Sleep on Home); asks first
        Binding("x", "stop_run", "Stop run", tooltip="Stop the run at the next step (asks)"),
        Binding("r", "resume", "Resume", tooltip="Resume this stopped run (shows the command)"),
        Binding("question_mark", "help", "Help"),
        *LIST_KEYS,
    ]

    def __init__(self, run_dir: Path) -> None:
        super().__init__()
        self.run_dir = Path(run_dir)
        self.header = RunHeader()
        self.status = RunStatus()
        self.steps_done = 0
        self.budget = None
        self.eta_s: float | None = None
        self.activity = ""  # what the run did last, in the run's numbering
        self.updates = 0  # batches handled; tests wait on it
        self.candidates: list = []  # every CandidateProposed, in order
        self.candidate_pos = 0  # the one the Candidate tab shows (follows the newest)
        self.gates: dict[int, object] = {}  # step → GateDecided
        self.lr: dict[int, LearningRateDecided] = {}  # step → its autonomous LR decision
        self._stoppable = False
        self.last_event_ts: float | None = None  # the run's latest event (its own clock)
        self._in_flight = False  # an update is posted and not yet handled
        # events absorbed since the last gc.freeze(); the first batch freezes at once, so
        # the app's own long-lived objects (widgets, modules) leave the scans too
        self._unfrozen_events = FREEZE_EVERY_EVENTS
        self._frozen = False  # whether the first batch's clean-up collection has run
        self.follower = RunFollower(self.run_dir, self._deliver, ready=lambda: not self._in_flight)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="run-header")
        with Horizontal(id="run-top"):
            yield ScoreChart(id="chart")
            with Vertical(id="gates-box"):
                yield GateLog(id="gates")
        with TabbedContent(id="run-tabs", initial="rollouts"):
            with TabPane("Rollouts (1)", id="rollouts"):
                yield Input(placeholder="filter: phases and steps, e.g. gate 3", id="filter")
                yield Label("", id="rollouts-count")
                yield RolloutsTable(id="rollouts-table")
            with TabPane("Reflection (2)", id="reflection"):
                yield ReflectionLog(id="reflection-log")
            with TabPane("Candidate (3)", id="candidate"):
                yield DiffView("No candidate proposed yet.", id="candidate-diff")
            with TabPane("Learning rate (4)", id="lr"):
                yield LearningRateLog(id="lr-log")
        yield BudgetFooter(id="budget")
        yield FittingFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False
        self.query_one(TabbedContent).hide_tab("lr")  # until an autonomous decision arrives
        self.follower.interval_s = self.app.poll_interval
        self.query_one(BudgetFooter).show(None, 0, 0, self.status.status, None)
        self.set_interval(1.0, self._tick)
        self._follow()

    def _deliver(self, update: FeedUpdate) -> None:
        self._in_flight = True
        self.post_message(RunFeedUpdated(update))

    def _follow(self) -> None:
        """One bounded batch of the log, then again after the follower's wait (the
        screen's timers end with it)."""
        self.follower.poll_once()
        self.set_timer(self.follower.next_wait_s(), self._follow)

    def on_run_feed_updated(self, message: RunFeedUpdated) -> None:
        try:
            self._show(message.update)
        finally:
            self._in_flight = False
            self._freeze_survivors(message.update.events)

    def _freeze_survivors(self, events: int) -> None:
        """The events the screen stores live as long as it does: frozen (`gc.freeze`), the
        collector no longer scans them. Unfrozen, every full collection walked every stored
        event, a 0.3-1 s freeze at 10,000 events/s. A freeze also holds whatever else is
        alive at that moment (a repainted line's caches) until the screen goes, even if it
        dies just after: so once per FREEZE_EVERY_EVENTS events, not per batch or per
        second, which bounds that by the events stored rather than by the time watched."""
        if not self._frozen:  # the screen's first batch: start from a clean heap, once
            gc.collect()
            self._frozen = True
        self._unfrozen_events += events
        if self._unfrozen_events >= FREEZE_EVERY_EVENTS:
            gc.freeze()
            self._unfrozen_events = 0

    def on_unmount(self) -> None:
        gc.unfreeze()  # what the screen held may now be garbage: collectable again

    def _show(self, u: FeedUpdate) -> None:
        if u.header is not None:
            self.header = u.header
        if u.status is not None:
            self.status = u.status
        if u.budget is not None:
            self.budget = u.budget
        if u.status is not None or u.steps is not None:
            self.eta_s = u.eta_s
        if u.activity is not None:
            self.activity = u.activity
        if u.steps is not None:
            self.steps_done = len(u.steps)
            self.query_one(ScoreChart).set_data(self.status.baseline_val, u.steps)
        elif u.status is not None:
            chart = self.query_one(ScoreChart)
            chart.set_data(self.status.baseline_val, chart.points)
        if u.last_event_ts is not None:
            self.last_event_ts = u.last_event_ts
        if u.header is not None or u.status is not None or self._stopping():
            self.query_one("#run-header", Static).update(self._header())
        self.query_one(RolloutsTable).add_rollouts(u.rollouts)
        self._count()
        self.query_one(ReflectionLog).add_reflections(u.reflections)
        self.query_one(GateLog).add_gates(u.gates)
        self.query_one(GateLog).add_final_checks(u.final_checks)
        for gate in u.gates:
            self.gates[gate.step] = gate
        if u.lr_decisions:
            if not self.lr:
                self.query_one(TabbedContent).show_tab("lr")
                self.refresh_bindings()  # `4` exists from now on
            self.query_one(LearningRateLog).add_decisions(u.lr_decisions)
            self.lr.update((d.step, d) for d in u.lr_decisions)
        if u.candidates:
            following = self.candidate_pos >= len(self.candidates) - 1
            self.candidates.extend(u.candidates)
            if following:
                self.candidate_pos = len(self.candidates) - 1
        if u.candidates or u.gates or u.lr_decisions:
            self._show_candidate()
        self._show_budget()
        self.updates += 1
        stoppable = bool(self.check_action("stop_run", ()))
        if stoppable != self._stoppable:  # `x` comes and goes with the launched process
            self._stoppable = stoppable
            self.refresh_bindings()

    def _stopping(self) -> bool:
        launcher = self.app.launcher
        return launcher.stopping and launcher.run_dir == self.run_dir

    def _header(self) -> Text:
        return header_text(self.run_dir, self.header, self.status, self._stopping())

    def _show_budget(self) -> None:
        """The budget line; a live run quiet for QUIET_S says how long its call has taken."""
        activity = self.activity
        quiet = None if self.last_event_ts is None else time.time() - self.last_event_ts
        if self.status.status == "live" and quiet is not None and quiet >= QUIET_S:
            activity = f"{activity} · call in flight {format_eta(quiet)}".lstrip(" ·")
        self.query_one(BudgetFooter).show(
            self.budget,
            self.steps_done,
            self.header.total_steps,
            self.status.status,
            self.eta_s,
            activity,
        )

    def _tick(self) -> None:
        """Once a second: the elapsed time of a call in flight, and the stop notice until
        the run ends."""
        if self.status.status == "live":
            self._show_budget()
            self.query_one("#run-header", Static).update(self._header())

    def _count(self) -> None:
        table = self.query_one(RolloutsTable)
        shown, total = len(table.rollouts), table.total
        count = counted(total, "rollout") if shown == total else f"{shown} of {total} rollouts"
        news = Text()
        if table.held is not None:
            news = Text(f" · paused: {len(table.held)} new (p shows them)", style="bold yellow")
        elif table.fresh:
            news = Text(f" · {counted(len(table.fresh), 'new row')} marked", style="green")
        if str(table.filter):
            hint = f" · filter: {table.filter} (f to change, empty to clear)"
        else:
            hint = " · f filters by phase or step"
        line = Text.assemble((count, "dim"), news, (hint, "dim")) if news else None
        self.query_one("#rollouts-count", Label).update(line or Text(count + hint, style="dim"))

    def action_pause(self) -> None:
        self.query_one(RolloutsTable).hold()
        self._count()
        self.refresh_bindings()  # p now resumes

    def action_resume_feed(self) -> None:
        self.query_one(RolloutsTable).resume()
        self._count()
        self.refresh_bindings()

    def action_filter(self) -> None:
        self.action_tab("rollouts")
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#filter")
    def _filtered(self, event: Input.Submitted) -> None:
        table = self.query_one(RolloutsTable)
        table.set_filter(event.value)
        event.input.display = False
        table.focus()
        self._count()

    def _show_candidate(self) -> None:
        if not self.candidates:
            return
        c = self.candidates[self.candidate_pos]
        title = Text.assemble(
            (f"step {c.step}", "bold"),
            f" · candidate {self.candidate_pos + 1}/{len(self.candidates)} · ",
            gate_verdict(self.gates.get(c.step)),
            (f" · {c.candidate_hash[:8]} ← {c.parent_hash[:8]} · , . other steps", "dim"),
        )
        if not c.valid:
            title.append("  INVALID: " + "; ".join(c.problems), style="bold red")
        decision = self.lr.get(c.step)  # the step's autonomous learning rate, if any
        preamble = None if decision is None else lr_line(decision)
        self.query_one(DiffView).show(c.diff, title, preamble)

    def action_candidate(self, delta: int) -> None:
        if not self.candidates:
            self.notify("No candidate proposed yet.", severity="information")
            return
        self.action_tab("candidate")
        self.candidate_pos = max(0, min(len(self.candidates) - 1, self.candidate_pos + delta))
        self._show_candidate()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    @on(RolloutsTable.RowSelected, "#rollouts-table")
    def _row_selected(self, event: RolloutsTable.RowSelected) -> None:
        event.stop()
        self.action_trajectory()

    def action_trajectory(self) -> None:
        table = self.query_one(RolloutsTable)
        rollout = table.rollout_at(table.cursor_row)
        if rollout is None:
            self.notify("No rollout selected.", severity="warning")
            return
        self._open_trajectory(rollout)

    @work(thread=True, group="trajectory", exit_on_error=False)
    def _open_trajectory(self, rollout) -> None:
        record = find_record(self.run_dir, rollout)
        self.app.call_from_thread(self.app.push_screen, TrajectoryScreen(rollout, record))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """`x` exists only for a run this window started and that is still running; `r`
        only for a run that stopped before its end and can be resumed."""
        if action == "tab" and parameters == ("lr",):
            return bool(self.lr)  # the tab exists only for an autonomous learning rate
        if action in ("pause", "resume_feed"):  # one key: pause, or resume while paused
            held = self.query_one(RolloutsTable).held is not None
            return held == (action == "resume_feed")
        launcher = self.app.launcher
        if action == "stop_run":
            return launcher.alive and launcher.run_dir == self.run_dir
        if action == "resume":
            return self.status.status in RESUMABLE and not (
                launcher.alive and launcher.run_dir == self.run_dir
            )
        return True

    def action_resume(self) -> None:
        if self.app.refuses_write("resume the run"):
            return
        launcher = self.app.launcher
        cmd = resume_command(self.run_dir, launcher.command)
        if cmd is None:
            self.notify("This run directory keeps no config.yaml to resume from.", severity="error")
            return
        if launcher.alive:
            self.notify("A run started here is still going; stop it (x) first.", severity="warning")
            return
        shown = shlex.join(cmd)
        body = Text.assemble(
            "Resume ",
            (self.run_dir.name, "bold"),
            " from its last finished step, in the background (quitting the TUI leaves it "
            "running). The command, to run it yourself instead:\n\n",
            (shown, "bold"),
        )

        def answered(choice: str | None) -> None:
            if choice == "yes":
                self.app.resume_run(cmd, self.run_dir)

        self.app.push_screen(ConfirmDialog("Resume this run?", body), answered)

    def action_stop_run(self) -> None:
        if self.app.refuses_write("stop the run"):
            return
        body = Text.assemble(
            "Stop ",
            (self.run_dir.name, "bold"),
            " at the next step boundary. It can be resumed later (r here, or the same "
            "`skillopt train` command).",
        )

        def answered(choice: str | None) -> None:
            if choice == "yes":
                self.app.stop_launched_run()
                self.query_one("#run-header", Static).update(self._header())

        self.app.push_screen(ConfirmDialog("Stop this run?", body), answered)

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display:
            box.display = False
            self.query_one(RolloutsTable).focus()
            return
        self.app.pop_screen()

    def action_help(self) -> None:
        self.app.show_help()
