"""History: a skill's log on main (adoptions, rollbacks); a commit's diff; roll back."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Label, OptionList
from textual.widgets.option_list import Option

from core.errors import UserError
from core.skills_repo.errors import DeployTargetChanged
from skillopt_tui.app.messages import (
    ActionFailed,
    CommitDiffLoaded,
    DeployConflict,
    LogLoaded,
    RollbackAsked,
    RollbackFinished,
    SkillsLoaded,
)
from skillopt_tui.app.screens.loading import LoadingScreen
from skillopt_tui.app.widgets.confirm_dialog import Choice, ConfirmDialog
from skillopt_tui.app.widgets.deploy_conflict import ask_overwrite
from skillopt_tui.app.widgets.diff_view import DiffView
from skillopt_tui.app.widgets.table_fill import fill_table
from skillopt_tui.app.widgets.word_diff import styled_diff
from skillopt_tui.app.worker_errors import LIST_KEYS

KIND_STYLE = {"adopt": "bold green", "rollback": "yellow", "init": "cyan", "add": "cyan"}


def commit_message(entry: Any) -> Text:
    """Subject, body and trailers: the why of an adoption or rollback, above its diff."""
    parts = [Text(entry.subject, style="bold")]
    body = (getattr(entry, "body", "") or "").strip()
    if body:
        parts += [Text(""), Text(body)]
    if entry.trailers:
        parts.append(Text(""))
        parts += [
            Text.assemble((f"{key}: ", "cyan"), str(value)) for key, value in entry.trailers.items()
        ]
    return Text("\n").join(parts)


class HistoryScreen(LoadingScreen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("d", "diff", "Diff"),
        Binding("R", "rollback", "Roll back"),
        Binding("w", "wrap", "Wrap", tooltip="Wrap the diff's long lines instead of cutting them"),
        Binding("left_square_bracket", "skill(-1)", "Prev skill", show=False),
        Binding("right_square_bracket", "skill(1)", "Next skill", show=False),
        Binding("question_mark", "help", "Help"),
        *LIST_KEYS,
    ]

    def __init__(self, skill: str | None = None) -> None:
        super().__init__()
        self.skill = skill
        self.skills: list[str] = []
        self.entries: list[Any] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="history"):
            with Vertical(id="history-side"):
                yield Label("Skills", classes="section-title")
                yield OptionList(id="skill-list")
            with Vertical(id="history-main"):
                yield Label("Log on main", classes="section-title", id="log-title")
                yield DataTable(id="log", cursor_type="row", zebra_stripes=True)
                yield DiffView(
                    "Press d to show the selected commit's diff.", fit=True, id="commit-diff"
                )
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#log", DataTable).focus()
        self._load_skills()

    # One exclusive group per kind of read: a newer read supersedes an older one of its
    # kind only (a shared group let the diff under the cursor cancel a rollback question).
    @work(thread=True, exclusive=True, group="history-skills", exit_on_error=False)
    def _load_skills(self) -> None:
        self.post_message(SkillsLoaded(self.app.skills.overview()))

    def on_skills_loaded(self, message: SkillsLoaded) -> None:
        self.skills = [row.name for row in message.overview.skills]
        options = self.query_one("#skill-list", OptionList)
        options.clear_options()
        options.add_options([Option(name, id=name) for name in self.skills])
        if not self.skills:
            self.query_one(DiffView).show("", "")
            self.query_one(DiffView).placeholder = message.overview.problem or "No skills."
            self.mark_loaded()
            return
        if self.skill not in self.skills:
            self.skill = self.skills[0]
        options.highlighted = self.skills.index(self.skill)
        self._load_log(self.skill)

    @on(OptionList.OptionSelected, "#skill-list")
    def _skill_selected(self, event: OptionList.OptionSelected) -> None:
        self.skill = self.skills[event.option_index]
        self._load_log(self.skill)

    def action_skill(self, delta: int) -> None:
        if self.skills:
            pos = (self.skills.index(self.skill) + delta) % len(self.skills)
            self.skill = self.skills[pos]
            self.query_one("#skill-list", OptionList).highlighted = pos
            self._load_log(self.skill)

    @work(thread=True, exclusive=True, group="history-log", exit_on_error=False)
    def _load_log(self, skill: str) -> None:
        try:
            entries = list(self.app.skills.repo().log(skill))
        except UserError as exc:
            self.post_message(ActionFailed("read log", str(exc)))
            return
        self.post_message(LogLoaded(skill, entries))

    def on_log_loaded(self, message: LogLoaded) -> None:
        self.entries = message.entries
        self.query_one("#log-title", Label).update(f"Log on main · {message.skill}")
        self._fill_log()
        self.query_one(DiffView).show("")
        self.mark_loaded()

    def _fill_log(self) -> None:
        """The log, each subject cut with … to the table's width (the diff pane below
        shows the whole message of the commit under the cursor)."""
        table = self.query_one("#log", DataTable)
        kind_width = max((len(e.kind) for e in self.entries), default=4)
        # date, kind, commit and subject columns with one cell of padding either side,
        # and the vertical scrollbar
        room = max(12, table.size.width - (10 + kind_width + 7 + 4 * 2 + 2))
        row = table.cursor_row
        fill_table(
            table,
            ("date", "kind", "commit", "subject"),
            [
                (
                    e.date_iso[:10],
                    Text(e.kind, style=KIND_STYLE.get(e.kind, "")),
                    e.sha[:7],
                    e.subject if len(e.subject) <= room else e.subject[: room - 1] + "…",
                )
                for e in self.entries
            ],
        )
        if 0 < row < table.row_count:
            table.move_cursor(row=row, animate=False)

    def on_resize(self) -> None:
        if self.entries:
            self._fill_log()

    def action_wrap(self) -> None:
        wrapped = self.query_one(DiffView).toggle_wrap()
        self.notify("Long diff lines wrapped." if wrapped else "Long diff lines cut with ….")

    def _selected(self) -> Any | None:
        table = self.query_one("#log", DataTable)
        if self.entries and 0 <= table.cursor_row < len(self.entries):
            return self.entries[table.cursor_row]
        return None

    @on(DataTable.RowSelected, "#log")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_diff()

    @on(DataTable.RowHighlighted, "#log")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The diff pane always shows the commit under the cursor, the one R acts on."""
        event.stop()
        self.action_diff()

    def action_diff(self) -> None:
        entry = self._selected()
        if entry is not None:
            self._load_commit(entry.sha)

    @work(thread=True, exclusive=True, group="history-commit", exit_on_error=False)
    def _load_commit(self, sha: str) -> None:
        try:
            diff = self.app.skills.repo().show(sha)
        except UserError as exc:
            self.post_message(ActionFailed("show commit", str(exc)))
            return
        self.post_message(CommitDiffLoaded(sha, diff))

    def on_commit_diff_loaded(self, message: CommitDiffLoaded) -> None:
        entry = next((e for e in self.entries if e.sha == message.sha), None)
        preamble = commit_message(entry) if entry is not None else None
        self.query_one(DiffView).show(message.diff, f"commit {message.sha[:7]}", preamble)

    def action_rollback(self) -> None:
        entry = self._selected()
        if entry is None:
            return
        if entry.kind != "adopt":
            self.notify(
                "Only an adoption can be rolled back; pick an 'adopt' row.", severity="warning"
            )
            return
        self._ask_rollback(entry)

    @work(thread=True, exclusive=True, group="history-rollback-ask", exit_on_error=False)
    def _ask_rollback(self, entry: Any) -> None:
        """Reads what the rollback would revert (the adoption's diff, numbered by hunk)."""
        try:
            repo = self.app.skills.repo()
            diff = repo.show(entry.sha)
            count = len(repo.adoption_hunks(entry.sha))
        except UserError as exc:
            self.post_message(ActionFailed("roll back", str(exc)))
            return
        self.post_message(RollbackAsked(entry, diff, count))

    def on_rollback_asked(self, message: RollbackAsked) -> None:
        entry = message.entry
        body = Text.assemble(
            "Revert ",
            (entry.sha[:7], "bold"),
            f" “{entry.subject}” with a new commit on main and redeploy the skill. ",
            "It reverts:\n\n",
            styled_diff(message.diff),
        )
        choices = [Choice("y", "Roll back all", "yes", "primary")]
        if message.hunks > 1:
            choices += [
                Choice(str(i), f"Only hunk {i}", str(i))
                for i in range(1, min(message.hunks, 9) + 1)
            ]
        choices.append(Choice("n", "No", "no"))

        def answered(choice: str | None) -> None:
            if choice == "yes":
                self._rollback(entry.sha)
            elif choice and choice.isdigit():
                self._rollback(entry.sha, hunks=[int(choice)])

        self.app.push_screen(
            ConfirmDialog("Roll back this adoption?", body, tuple(choices)), answered
        )

    @work(thread=True, group="git-write", exit_on_error=False)
    def _rollback(self, sha: str, force: bool = False, hunks: list[int] | None = None) -> None:
        try:
            kwargs = {"hunks": hunks} if hunks else {}
            commit = self.app.skills.repo().rollback(sha, force=force, **kwargs)
        except DeployTargetChanged as exc:
            self.post_message(
                DeployConflict(
                    "roll back", exc, lambda: self._rollback(sha, force=True, hunks=hunks)
                )
            )
            return
        except UserError as exc:
            self.post_message(ActionFailed("roll back", str(exc)))
            return
        self.post_message(RollbackFinished(commit, sha))

    def on_deploy_conflict(self, message: DeployConflict) -> None:
        ask_overwrite(self, message)

    def on_rollback_finished(self, message: RollbackFinished) -> None:
        self.notify(
            f"Rolled back {message.target[:7]} as {message.commit[:7]}", title="Rolled back"
        )
        if self.skill:
            self._load_log(self.skill)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_help(self) -> None:
        self.app.show_help()
