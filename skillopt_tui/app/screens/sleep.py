"""Sleep: what the nightly companion reads (sources, the project's sessions, what it
redacts), what its nights did (tasks mined and replayed, scores, staged branches → Review,
runs → Run), the tasks it mined, and a night started now.

Everything is read from the Sleep state directory and a harvest preview that moves no
cursor; a night started here is `skillopt sleep run` in a child process, the same night
cron runs.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Label, Static, TabbedContent, TabPane

from skillopt_tui.app.compare_marks import MARK_KEYS, CompareMarks
from skillopt_tui.app.messages import (
    MinedTasksLoaded,
    NightsLoaded,
    SleepPreviewLoaded,
)
from skillopt_tui.app.screens.sleep_night_launch import NightLaunchActions
from skillopt_tui.app.sleep_data import (
    HarvestPreview,
    NightView,
    SleepContext,
    TaskList,
    adoption_lines,
    archive_tasks,
    harvest_preview,
    load_context,
    load_nights,
    night_tasks,
    preference_lines,
)
from skillopt_tui.app.sleep_projects import choice_line, shown_with
from skillopt_tui.app.widgets import sleep_rows as rows
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.app.widgets.night_progress import NightProgressLine
from skillopt_tui.app.widgets.table_fill import fill_table
from skillopt_tui.app.worker_errors import AppScreen

HELP = (
    "1 sources · 2 sessions · 3 redactions · 4 nights · 5 mined tasks. "
    "Sessions are those a night would read now (new since the last night); a shows the whole "
    "history. On a night's skill Enter opens its run; on a staged branch Enter opens Review. "
    "r runs a night now (`skillopt sleep run`, settings from sleep.yaml); x stops it at the "
    "next step (resumable). t switches the mined tasks between the night and the archive. "
    "With several recorded projects p shows the next one (its sessions, nights and tasks). "
    "space marks a night's skill row, c compares the marked ones (one skill across nights)."
)
PREVIEW_TABS = {"sources", "sessions", "redactions"}
SCROLLBAR_CELLS = 2  # kept free for the table's vertical scrollbar
TAB_TABLE = {
    "sources": "roots",
    "sessions": "session-list",
    "redactions": "redaction-list",
    "nights": "night-list",
    "mined": "mined-list",
}


class SleepScreen(CompareMarks, NightLaunchActions, AppScreen):
    AUTO_FOCUS = "#night-list"
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("1", "tab('sources')", "Tabs", key_display="1-5", tooltip="Sources found"),
        Binding("2", "tab('sessions')", "Sessions", show=False),
        Binding("3", "tab('redactions')", "Redactions", show=False),
        Binding("4", "tab('nights')", "Nights", show=False),
        Binding("5", "tab('mined')", "Mined tasks", show=False),
        Binding(
            "enter",
            "open",
            "Open",
            priority=True,
            tooltip="Open the run, or Review the staged branch",
        ),
        Binding("v", "review", "Review", tooltip="Review the selected night's staged branch"),
        Binding("r", "run_night", "Run night", tooltip="Run a night now (skillopt sleep run)"),
        Binding("x", "stop_night", "Stop night", tooltip="Stop the night at the next step (asks)"),
        Binding("a", "all_history", "All/new", tooltip="Sessions: whole history or new only"),
        Binding("t", "task_source", "Night/archive", tooltip="Mined tasks: night or archive"),
        Binding("p", "next_project", "Project", tooltip="Show the next recorded project"),
        Binding("g", "refresh", "Refresh"),
        Binding("question_mark", "help", "Help"),
        *MARK_KEYS,
    ]

    def __init__(self, initial_tab: str = "nights") -> None:
        super().__init__()
        self.initial_tab = initial_tab
        self.context = SleepContext(Path("."))
        self.preview: HarvestPreview | None = None
        self.everything = False
        self.nights: list[NightView] = []  # the shown project's
        self.all_nights: list[NightView] = []
        self.project_at = 0  # which recorded project is shown (sleep_projects.py)
        self.night_refs: list[rows.NightRow] = []
        self.marked: list[Path] = []  # nights' skill folders to compare, in the order marked
        self.tasks = TaskList("")
        self.archive = False
        self.progress = ""
        self.loaded = {"preview": 0, "nights": 0, "tasks": 0}  # tests wait on these

    def compose(self) -> ComposeResult:
        yield Static("Sleep", id="sleep-header")
        yield NightProgressLine(id="night-progress")
        with TabbedContent(id="sleep-tabs", initial=self.initial_tab):
            with TabPane("Sources 1", id="sources"):
                yield DataTable(id="roots", cursor_type="row")
                yield Static("", id="sources-summary")
                yield Label("Skipped files", classes="section-title")
                yield DataTable(id="skipped", cursor_type="row")
                yield Static("", id="skipped-empty", classes="sleep-empty")
            with TabPane("Sessions 2", id="sessions"):
                yield DataTable(id="session-list", cursor_type="row", zebra_stripes=True)
                yield Static("", id="sessions-empty", classes="sleep-empty")
                yield Label("", id="session-title", classes="section-title")
                yield DataTable(id="session-tasks", cursor_type="row")
            with TabPane("Redactions 3", id="redactions"):
                yield Static("", id="redactions-summary")
                yield DataTable(id="redaction-list", cursor_type="row", zebra_stripes=True)
                yield Static("", id="redactions-empty", classes="sleep-empty")
                yield Static("", id="redaction-detail", classes="sleep-detail")
            with TabPane("Nights 4", id="nights"):
                yield DataTable(id="night-list", cursor_type="row")
                yield Static("", id="nights-empty", classes="sleep-empty")
                yield Static("", id="night-detail", classes="sleep-detail")
                since = Static("", id="since-adoption", classes="sleep-detail")
                since.display = False
                yield since
                preferences = Static("", id="preferences", classes="sleep-detail")
                preferences.display = False
                yield preferences
            with TabPane("Mined tasks 5", id="mined"):
                yield Label("", id="mined-title", classes="section-title")
                yield DataTable(id="mined-list", cursor_type="row", zebra_stripes=True)
                yield Static("", id="mined-empty", classes="sleep-empty")
                yield Static("", id="mined-detail", classes="sleep-detail")
        yield FittingFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        for empty in self.query(".sleep-empty"):
            empty.display = False
        self.action_refresh()
        if self.app.night_launcher.alive:
            self.query_one(NightProgressLine).follow()

    # -- loading ----------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self._load_nights()
        self._load_preview(self.everything)

    def on_screen_resume(self) -> None:
        """Back from Review or History: a staged branch may be adopted or rolled back now."""
        if self.is_mounted and self.loaded["nights"]:
            self._load_nights()

    @property
    def project(self) -> Path:
        projects = self.context.projects
        return projects[self.project_at % len(projects)]

    @work(thread=True, exclusive=True, group="sleep-preview", exit_on_error=False)
    def _load_preview(self, everything: bool) -> None:
        ctx = load_context(self.app.state_dir)
        project = ctx.projects[self.project_at % len(ctx.projects)]
        preview = harvest_preview(ctx, everything=everything, project=project)
        self.post_message(SleepPreviewLoaded(preview))

    @work(thread=True, exclusive=True, group="sleep-nights", exit_on_error=False)
    def _load_nights(self) -> None:
        state = self.app.state_dir
        ctx = load_context(state)
        self.post_message(
            NightsLoaded(ctx, load_nights(state), adoption_lines(ctx), preference_lines(ctx))
        )

    @work(thread=True, exclusive=True, group="sleep-tasks", exit_on_error=False)
    def _load_tasks(self, night: NightView | None, archive: bool) -> None:
        if archive or night is None:
            ctx = load_context(self.app.state_dir)
            tasks = archive_tasks(ctx)
            project = ctx.projects[self.project_at % len(ctx.projects)]
            tasks.rows = [
                r for r in tasks.rows if shown_with(r.task.project, project, ctx.projects)
            ]
        else:
            tasks = night_tasks(night)
        self.post_message(MinedTasksLoaded(tasks))

    def _empty(self, name: str, table: str, text: str | Text | None) -> None:
        """Show `text` in place of the table `table` (None: the table)."""
        empty = self.query_one(f"#{name}-empty", Static)
        empty.display = text is not None
        self.query_one(f"#{table}").display = text is None
        if text is not None:
            empty.update(text if isinstance(text, Text) else Text(text, style="dim"))

    def on_sleep_preview_loaded(self, message: SleepPreviewLoaded) -> None:
        p = self.preview = message.preview
        self._header()
        fill_table(self.query_one("#roots", DataTable), rows.ROOT_COLUMNS, rows.root_cells(p))
        self.query_one("#sources-summary", Static).update(rows.sources_summary(p))
        skipped = rows.skipped_cells(p)
        fill_table(self.query_one("#skipped", DataTable), rows.SKIPPED_COLUMNS, skipped)
        self._empty(
            "skipped", "skipped", None if skipped or p.result is None else "no file skipped"
        )

        sessions = rows.sessions_of(p)
        fill_table(
            self.query_one("#session-list", DataTable),
            rows.SESSION_COLUMNS,
            rows.session_cells(sessions),
        )
        self._empty("sessions", "session-list", None if sessions else rows.no_sessions(p))
        self._show_session(0)

        shown = rows.redaction_cells(p)
        self.query_one("#redactions-summary", Static).update(rows.redaction_summary(p))
        fill_table(self.query_one("#redaction-list", DataTable), rows.REDACTION_COLUMNS, shown)
        self._empty(
            "redactions",
            "redaction-list",
            None if shown else "nothing redacted in these sessions' tasks",
        )
        self._show_redaction(0)
        self._focus_table()
        self.loaded["preview"] += 1

    def _header(self) -> None:
        project = self.preview.project if self.preview else self.project
        note = choice_line(project, self.context.projects)
        header = rows.header(self.context, project, self.everything, note)
        self.query_one("#sleep-header", Static).update(header)

    def on_nights_loaded(self, message: NightsLoaded) -> None:
        self.context = message.context
        self._header()
        self.refresh_bindings()  # p: only with several recorded projects
        selected = self._night_row()
        self.all_nights = message.nights
        self.nights = [
            n for n in message.nights if shown_with(n.project, self.project, self.context.projects)
        ]
        self.night_refs, cells = rows.night_rows(self.nights, self.marked)
        table = self.query_one("#night-list", DataTable)
        self._fill_nights(cells)
        self._empty("nights", "night-list", None if self.nights else rows.no_nights(self.context))
        if selected is not None:  # keep the cursor on the same row after a refresh
            for pos, ref in enumerate(self.night_refs):
                if (ref.kind, ref.night.night_id, ref.skill and ref.skill.skill) == (
                    selected.kind,
                    selected.night.night_id,
                    selected.skill and selected.skill.skill,
                ):
                    table.move_cursor(row=pos, animate=False)
        self._show_night_detail()
        since = self.query_one("#since-adoption", Static)
        since.update(rows.since_adoption(message.since_adoption))
        since.display = bool(message.since_adoption)  # no adopted Sleep edit: no room taken
        preferences = self.query_one("#preferences", Static)
        preferences.update(rows.preferences_text(message.preferences))
        preferences.display = bool(message.preferences)
        self._focus_table()
        self._load_tasks(self._selected_night(), self.archive)
        self.loaded["nights"] += 1

    def _fill_nights(self, cells: list[tuple]) -> None:
        """The first column (night, skill, branch) gives way so the scores stay whole; a
        cut branch name is whole in the detail below."""
        table = self.query_one("#night-list", DataTable)
        width = table.size.width or self.app.size.width
        scrolls = not table.size.height or len(cells) + 1 > table.size.height  # + header
        fit = width - (SCROLLBAR_CELLS if scrolls else 0)
        fill_table(table, rows.NIGHT_COLUMNS, cells, fit=fit, flexible=0)

    def on_resize(self) -> None:
        self._refill_nights()

    def _refill_nights(self) -> None:
        if self.night_refs:
            table = self.query_one("#night-list", DataTable)
            row = table.cursor_row
            self._fill_nights(rows.night_rows(self.nights, self.marked)[1])
            table.move_cursor(row=row, animate=False)

    def run_under_cursor(self) -> Path | None:
        row = self._night_row()
        if row is None or row.kind != "skill" or row.skill is None or row.skill.run_dir is None:
            self.notify(
                "Mark a night's skill row (one with a run) to compare the skill across nights.",
                severity="warning",
            )
            return None
        return row.skill.run_dir

    def marks_changed(self) -> None:
        self._refill_nights()

    def on_mined_tasks_loaded(self, message: MinedTasksLoaded) -> None:
        self.tasks = message.tasks
        title = f"Mined tasks · {self.tasks.title} ({len(self.tasks.rows)})  t: " + (
            "the night's" if self.archive else "the archive"
        )
        self.query_one("#mined-title", Label).update(title)
        fill_table(
            self.query_one("#mined-list", DataTable),
            rows.MINED_COLUMNS,
            rows.mined_cells(self.tasks),
        )
        empty = None
        if not self.tasks.rows:
            empty = self.tasks.problem or "no tasks mined yet: a night mines them (press r)"
        self._empty("mined", "mined-list", empty)
        self._focus_table()
        self._show_task(0)
        self.loaded["tasks"] += 1

    # -- selection ------------------------------------------------------------------------------

    def _cursor(self, table_id: str, count: int) -> int | None:
        table = self.query_one(f"#{table_id}", DataTable)
        return table.cursor_row if 0 <= table.cursor_row < count else None

    def _night_row(self) -> rows.NightRow | None:
        pos = self._cursor("night-list", len(self.night_refs))
        return None if pos is None else self.night_refs[pos]

    def _selected_night(self) -> NightView | None:
        row = self._night_row()
        return row.night if row else (self.nights[0] if self.nights else None)

    def _show_night_detail(self) -> None:
        self.query_one("#night-detail", Static).update(rows.night_detail(self._night_row()))

    def _show_session(self, pos: int) -> None:
        sessions = rows.sessions_of(self.preview) if self.preview else []
        title = self.query_one("#session-title", Label)
        table = self.query_one("#session-tasks", DataTable)
        title.display = table.display = bool(sessions)
        if not sessions or pos >= len(sessions):
            return
        title.update(rows.session_title(sessions[pos]))
        fill_table(table, rows.TASK_COLUMNS, rows.task_cells(sessions[pos]))

    def _show_task(self, pos: int) -> None:
        row = self.tasks.rows[pos] if 0 <= pos < len(self.tasks.rows) else None
        self.query_one("#mined-detail", Static).update(rows.mined_detail(row))

    @on(DataTable.RowHighlighted, "#session-list")
    def _session_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_session(event.cursor_row)

    def _show_redaction(self, pos: int) -> None:
        detail = rows.redaction_detail(self.preview, pos)
        widget = self.query_one("#redaction-detail", Static)
        widget.display = bool(detail)
        widget.update(detail)

    @on(DataTable.RowHighlighted, "#redaction-list")
    def _redaction_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_redaction(event.cursor_row)

    @on(DataTable.RowHighlighted, "#mined-list")
    def _task_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_task(event.cursor_row)

    @on(DataTable.RowHighlighted, "#night-list")
    def _night_highlighted(self, event: DataTable.RowHighlighted) -> None:
        before = self.tasks.title
        self._show_night_detail()
        night = self._selected_night()
        if not self.archive and night is not None and before != f"night {night.night_id}":
            self._load_tasks(night, False)

    @on(DataTable.RowSelected, "#night-list")
    def _night_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    # -- actions -------------------------------------------------------------------------------

    def _tab(self) -> str:
        return self.query_one(TabbedContent).active

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Keys come and go with the tab and with the night launched from here."""
        running = self.app.night_launcher.alive
        tab = self._tab() if self.is_mounted else self.initial_tab
        if action == "run_night":
            return not running
        if action == "stop_night":
            return running
        if action in ("open", "review", "mark", "compare"):
            return tab == "nights"
        if action == "all_history":
            return tab in PREVIEW_TABS
        if action == "task_source":
            return tab == "mined"
        if action == "next_project":
            return len(self.context.projects) > 1
        return True

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self._focus_table()
        self.refresh_bindings()

    def _focus_table(self) -> None:
        """The tab's main table takes the keys (↑/↓, Enter); when it is hidden (an empty
        state) nothing is focused, rather than whatever Textual picks next."""
        table = self.query_one(f"#{TAB_TABLE[self._tab()]}", DataTable)
        self.set_focus(table if table.display else None)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_open(self) -> None:
        row = self._night_row()
        if row is None:
            return
        if row.kind == "branch":
            self.action_review()
        elif row.kind == "skill" and row.skill is not None:
            if row.skill.run_dir is None:
                self.notify(
                    f"{row.skill.skill} has no run: {row.skill.reason or row.skill.status}",
                    severity="warning",
                )
                return
            self.app.open_run(row.skill.run_dir)

    def action_review(self) -> None:
        row = self._night_row()
        staged = row.skill.staged if row and row.skill else None
        if row is None or row.skill is None or not staged:
            self.notify("Pick a staged branch (a ↳ row) to review.", severity="warning")
            return
        if row.skill.branch_state != "staged":
            self.notify(rows.branch_gone(row.skill) + ".", severity="warning")
            return
        repo = self.app.skills.path
        recorded = self.context.settings.skills_repo
        if recorded and (repo is None or Path(repo).absolute() != Path(recorded).absolute()):
            where = f"this window shows {repo}" if repo else "this window has no skills repository"
            self.notify(
                f"{staged} is in {recorded}; {where}: restart with "
                f"`skillopt tui --skills-repo {recorded}`",
                severity="warning",
                timeout=10,
            )
            return
        self.app.open_review(row.skill.skill, branch=staged)

    def action_all_history(self) -> None:
        self.everything = not self.everything
        self._header()
        self.notify(
            "Sessions: the whole history (cursors ignored)."
            if self.everything
            else "Sessions: new since the last night."
        )
        self._load_preview(self.everything)

    def action_next_project(self) -> None:
        """The next recorded project: its sessions, nights and mined tasks."""
        projects = self.context.projects
        if len(projects) < 2:
            return
        self.project_at = (self.project_at + 1) % len(projects)
        self.preview = None
        self._header()
        self.notify(f"Project {self.project_at + 1} of {len(projects)}: {rows.tilde(self.project)}")
        self.action_refresh()

    def action_task_source(self) -> None:
        self.archive = not self.archive
        self._load_tasks(self._selected_night(), self.archive)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_help(self) -> None:
        self.app.show_help(HELP)
