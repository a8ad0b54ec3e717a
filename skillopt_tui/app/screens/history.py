"""History: a skill's log on main (adoptions, and what of them was rolled back); a commit's
diff; roll back what is still live."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, OptionList
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
from skillopt_tui.app.rollbacks import RolledBack, rollbacks
from skillopt_tui.app.screens.loading import LoadingScreen
from skillopt_tui.app.screens.repo_follow import FollowsRepo
from skillopt_tui.app.widgets.confirm_dialog import Choice, ConfirmDialog
from skillopt_tui.app.widgets.deploy_conflict import ask_overwrite
from skillopt_tui.app.widgets.diff_view import DiffView
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.app.widgets.table_fill import fill_table
from skillopt_tui.app.widgets.word_diff import styled_diff
from skillopt_tui.app.worker_errors import LIST_KEYS

KIND_STYLE = {"adopt": "bold green", "rollback": "yellow", "init": "cyan", "add": "cyan"}


def commit_message(entry: Any, rolled: RolledBack | None = None) -> Text:
    """Subject, body and trailers: the why of an adoption or rollback, above its diff; for
    an adoption, what of it was rolled back since, and by which commits."""
    parts = [Text(entry.subject, style="bold")]
    if rolled is not None:
        said = rolled.describe()
        by = ", ".join(sha[:7] for sha in rolled.by)
        parts.append(Text(f"{said[0].upper()}{said[1:]} by {by}.", style="yellow"))
    body = (getattr(entry, "body", "") or "").strip()
    if body:
        parts += [Text(""), Text(body)]
    if entry.trailers:
        parts.append(Text(""))
        parts += [
            Text.assemble((f"{key}: ", "cyan"), str(value)) for key, value in entry.trailers.items()
        ]
    return Text("\n").join(parts)


class HistoryScreen(FollowsRepo, LoadingScreen):
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
        self.rolled: dict[str, RolledBack] = {}  # adoption sha: what of it was rolled back

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
        yield FittingFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#log", DataTable).focus()
        self._load_skills()
        self.follow_repo()

    def reread(self) -> None:
        """main moved (a rollback or adopt elsewhere): the log is read again."""
        if self.skill in self.skills:
            self._load_log(self.skill)
        else:
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
        version = self.app.skills.version()
        try:
            entries = list(self.app.skills.repo().log(skill))
        except UserError as exc:
            self.post_message(ActionFailed("read log", str(exc)))
            return
        self.post_message(LogLoaded(skill, entries, version))

    def on_log_loaded(self, message: LogLoaded) -> None:
        if message.skill != self.skill:
            return  # a late answer for a skill no longer selected
        self.seen = message.version
        self.entries = message.entries
        self.rolled = rollbacks(self.entries)
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
                    self._subject(e, room),
                )
                for e in self.entries
            ],
        )
        if 0 < row < table.row_count:
            table.move_cursor(row=row, animate=False)

    def _subject(self, entry: Any, room: int) -> Text:
        """The subject cut with … to `room`; an adoption rolled back (in part) says so
        first, where the cut cannot hide it."""
        rolled = self.rolled.get(entry.sha) if entry.kind == "adopt" else None
        mark = f"({rolled.describe()}) " if rolled else ""
        text = mark + entry.subject
        if len(text) > room:
            text = text[: room - 1] + "…"
        cell = Text(text)
        cell.stylize("yellow", 0, len(mark))
        return cell

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
        rolled = self.rolled.get(message.sha) if entry is not None else None
        preamble = commit_message(entry, rolled) if entry is not None else None
        self.query_one(DiffView).show(message.diff, f"commit {message.sha[:7]}", preamble)

    def action_rollback(self) -> None:
        entry = self._selected()
        if entry is None or self.app.refuses_write("roll back"):
            return
        if entry.kind != "adopt":
            self.notify(
                "Only an adoption can be rolled back; pick an 'adopt' row.", severity="warning"
            )
            return
        rolled = self.rolled.get(entry.sha)
        if rolled is not None and rolled.whole:
            self._already_rolled_back(entry, rolled)
            return
        self._ask_rollback(entry)

    def _already_rolled_back(self, entry: Any, rolled: RolledBack) -> None:
        by = ", ".join(sha[:7] for sha in rolled.by)
        self.notify(
            f"Adoption {entry.sha[:7]} was already rolled back (by {by}); nothing left to revert.",
            severity="warning",
        )

    @work(thread=True, exclusive=True, group="history-rollback-ask", exit_on_error=False)
    def _ask_rollback(self, entry: Any) -> None:
        """Reads what the rollback would revert (the adoption's diff, numbered by hunk)."""
        try:
            repo = self.app.skills.repo()
            hunks = repo.adoption_hunks(entry.sha)
            live = repo.live_adoption_hunks(entry.sha)
            diff = repo.show(entry.sha) if len(live) == len(hunks) else _hunks_diff(hunks, live)
        except UserError as exc:
            self.post_message(ActionFailed("roll back", str(exc)))
            return
        self.post_message(RollbackAsked(entry, diff, len(hunks), live))

    def on_rollback_asked(self, message: RollbackAsked) -> None:
        """Offers what can still be rolled back: the whole rest, or one live hunk (keys
        1-9); hunks rolled back already are named, not offered."""
        entry = message.entry
        rolled = self.rolled.get(entry.sha, RolledBack(False, frozenset(), ()))
        live = [i for i in rolled.live(message.hunks) if i in message.live]
        if not live:
            self._already_rolled_back(entry, rolled)
            return
        earlier = ""
        if rolled.hunks:
            by = ", ".join(sha[:7] for sha in rolled.by)
            earlier = f"Its {rolled.describe().replace('rolled back', 'was rolled back')}"
            earlier = f"{earlier} already ({by}). "
        gone = [i for i in rolled.live(message.hunks) if i not in message.live]
        if gone:  # undone by a later commit, not by a rollback of this adoption
            names = ", ".join(map(str, gone))
            earlier += f"Hunk {names} is no longer on main (a later commit undid it). "
        body = Text.assemble(
            "Revert ",
            (entry.sha[:7], "bold"),
            f" “{entry.subject}” with a new commit on main and redeploy the skill. ",
            (earlier, "yellow"),
            "It reverts:\n\n",
            styled_diff(message.diff),
        )
        everything = "Roll back the rest" if len(live) < message.hunks else "Roll back all"
        choices = [Choice("y", everything, "yes", "primary")]
        if len(live) > 1:
            choices += [
                Choice(str(i), f"Only hunk {i}", str(i), in_footer=False) for i in live if i <= 9
            ]
        choices.append(Choice("n", "No", "no"))

        def answered(choice: str | None) -> None:
            if choice == "yes" and len(live) < message.hunks and gone:
                self._rollback(entry.sha, hunks=live)  # exactly what main still holds
            elif choice == "yes":
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


def _hunks_diff(hunks: list[Any], live: list[int]) -> str:
    """Only the hunks main still holds, numbered, as a diff for the dialog."""
    rows = []
    for hunk in hunks:
        if hunk.index in live:
            rows.append(f"{hunk.header}  (hunk {hunk.index})")
            rows += hunk.lines
    return "\n".join(rows) + "\n"
