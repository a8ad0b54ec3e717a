"""Home: the runs in the runs directory and the skills in the skills repository."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Label

from core.run.directory import RunInfo, list_runs
from skillopt_tui.app.compare_marks import (
    MARK_KEYS,
    CompareMarks,
    marked_cell,
    marks_hint,
)
from skillopt_tui.app.messages import RunsLoaded, SkillsLoaded
from skillopt_tui.app.skills_data import SkillsOverview
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.app.widgets.table_fill import fill_table
from skillopt_tui.app.worker_errors import LIST_KEYS, AppScreen

STATUS_STYLE = {
    "live": "bold green",
    "finished": "cyan",
    "failed": "bold red",
    "stopped": "yellow",
    "interrupted": "yellow",
    "waiting": "yellow",
}
REFRESH_S = 2.0
RUN_COLUMNS = ("run", "env", "status", "base → best", "steps", "cost")
SKILL_COLUMNS = ("skill", "staged", "last adoption", "deploys to")


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def run_cells(row: RunInfo, marked: bool = False) -> tuple:
    total = f"/{row.total_steps}" if row.total_steps else ""
    return (
        marked_cell(row.run_id, marked),
        row.env,
        Text(row.status, style=STATUS_STYLE.get(row.status, "")),
        f"{_score(row.baseline_val)} → {_score(row.best_val)}",
        f"{row.steps_done}{total}",
        f"${row.cost_usd:.2f}",
    )


class HomeScreen(CompareMarks, AppScreen):
    BINDINGS = [
        Binding("enter", "open", "Open", priority=True),
        Binding("n", "new_run", "New run"),
        Binding("v", "review", "Review"),
        Binding("h", "history", "History"),
        Binding("s", "sleep", "Sleep", tooltip="Sleep: transcripts, nights, mined tasks"),
        Binding("g", "refresh", "Refresh"),
        Binding("question_mark", "help", "Help"),
        *MARK_KEYS,
        *LIST_KEYS,
        Binding("q", "app.quit", "Quit", tooltip="Leave SkillOpt"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[RunInfo] = []
        self.runs_shown = False
        self.marked: list[Path] = []  # runs to compare, in the order marked
        self.overview = SkillsOverview()

    def compose(self) -> ComposeResult:
        with Vertical(id="home"):
            yield Label("Runs", classes="section-title")
            yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
            yield Label("", id="runs-empty")
            yield Label("", id="runs-marks")
            yield Label("Skills", classes="section-title")
            yield DataTable(id="skills", cursor_type="row", zebra_stripes=True)
            yield Label("", id="skills-problem")
        yield FittingFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#runs-empty", Label).display = False
        self.query_one("#runs-marks", Label).display = False
        self.action_refresh()
        if self.app.refresh_runs:
            # follow both sources: a headless run adds runs and stages branches
            self.set_interval(REFRESH_S, self.action_refresh)

    def on_screen_resume(self) -> None:
        """Back from Review or History: an adopt or rollback there changed the skills."""
        if self.is_mounted:
            self._load_skills()

    def action_refresh(self) -> None:
        self._load_runs()
        self._load_skills()

    @work(thread=True, exclusive=True, group="home-runs", exit_on_error=False)
    def _load_runs(self) -> None:
        self.post_message(RunsLoaded(list_runs(self.app.runs_dir)))

    @work(thread=True, exclusive=True, group="home-skills", exit_on_error=False)
    def _load_skills(self) -> None:
        self.post_message(SkillsLoaded(self.app.skills.overview()))

    def on_runs_loaded(self, message: RunsLoaded) -> None:
        if message.rows == self.runs and self.runs_shown:
            return
        self.runs_shown = True
        self.runs = message.rows
        self._fill_runs()
        empty = self.query_one("#runs-empty", Label)
        empty.display = not self.runs
        empty.update(
            Text(
                f"No runs in {self.app.runs_dir} yet: press n to start one here, or run "
                f"`skillopt train -c CONFIG --out {self.app.runs_dir / 'NAME'}` in a shell.",
                style="dim",
            )
        )

    def _fill_runs(self) -> None:
        table = self.query_one("#runs", DataTable)
        cursor = table.cursor_row
        fill_table(
            table,
            RUN_COLUMNS,
            [run_cells(r, r.path in self.marked) for r in self.runs],
            [str(r.path) for r in self.runs],
        )
        if 0 < cursor < table.row_count:
            table.move_cursor(row=cursor, animate=False)

    def run_under_cursor(self) -> Path | None:
        if self.focused is not None and self.focused.id == "skills":
            return None  # space on the skills list: no run is in view under a cursor there
        run = self._selected_run()
        return run.path if run is not None else None

    def marks_changed(self) -> None:
        self._fill_runs()
        hint = self.query_one("#runs-marks", Label)
        hint.display = bool(self.marked)
        hint.update(Text(marks_hint(self.marked), style="magenta"))

    def on_skills_loaded(self, message: SkillsLoaded) -> None:
        if message.overview == self.overview and self.overview.skills:
            return  # nothing moved: keep the cursor where it is
        self.overview = message.overview
        rows = []
        for row in self.overview.skills:
            staged = Text(str(row.staged), style="bold yellow") if row.staged else "0"
            rows.append((row.name, staged, row.last_adoption or "—", row.deploy_to or "—"))
        fill_table(
            self.query_one("#skills", DataTable),
            SKILL_COLUMNS,
            rows,
            [r.name for r in self.overview.skills],
        )
        problem = self.query_one("#skills-problem", Label)
        problem.update(
            Text(self.overview.problem or "no skills yet — `skillopt init`", style="dim")
            if not self.overview.skills
            else ""
        )
        problem.display = not self.overview.skills

    def _selected_run(self) -> RunInfo | None:
        table = self.query_one("#runs", DataTable)
        if self.runs and 0 <= table.cursor_row < len(self.runs):
            return self.runs[table.cursor_row]
        return None

    def _selected_skill(self) -> str | None:
        table = self.query_one("#skills", DataTable)
        rows = self.overview.skills
        if rows and 0 <= table.cursor_row < len(rows):
            return rows[table.cursor_row].name
        return None

    def action_open(self) -> None:
        if self.focused is not None and self.focused.id == "skills":
            skill = self._selected_skill()
            if skill is None:
                return
            staged = any(b.skill == skill for b in self.overview.staged)
            self.app.open_review(skill) if staged else self.app.open_history(skill)
            return
        run = self._selected_run()
        if run is not None:
            self.app.open_run(run.path)

    def action_new_run(self) -> None:
        self.app.action_new_run()

    def action_review(self) -> None:
        self.app.open_review(self._selected_skill())

    def action_history(self) -> None:
        self.app.open_history(self._selected_skill())

    def action_sleep(self) -> None:
        self.app.open_sleep()

    def action_help(self) -> None:
        self.app.show_help()
