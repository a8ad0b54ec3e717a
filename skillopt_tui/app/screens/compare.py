"""Compare: the marked runs item by item against the first, per split (improved /
regressed / same), the sign test's p, each run's mean and 95% interval, tokens and cost,
and seeds of one config as mean ± spread. The numbers and their layout are those of
`skillopt compare` (one engine, skillopt_tui.cli.run_cards.comparison_of, and one text
form, core.research.compare_text); cards are built in a worker, as they may load data.

Runs that cannot be compared (their test splits differ) get the command's one-line
refusal in place of the tables."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import Label, Static

from core.errors import UserError
from core.research.compare import Comparison, distinct_names
from core.research.compare_text import comparison_lines
from skillopt_tui.app.messages import ComparisonLoaded
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.app.worker_errors import AppScreen

SKILLS = ("best", "final", "initial")
MARK_STYLE = {"▲": "bold green", "▼": "bold red"}


def comparison_text(comparison: Comparison) -> Text:
    splits = {split.split for split in comparison.splits}
    text = Text()
    for line in comparison_lines(comparison):
        row = Text(line)
        if line.split(" (")[0] in splits:
            row.stylize("bold")
        for mark, style in MARK_STYLE.items():
            row.highlight_words([mark], style)
        text.append_text(row)
        text.append("\n")
    text.rstrip()
    return text


class CompareScreen(AppScreen):
    AUTO_FOCUS = "#compare-body"
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("s", "skill", "Skill", tooltip="Compare the best, final or initial skills"),
        Binding("question_mark", "help", "Help"),
    ]

    def __init__(self, runs: list[Path], skill: str = "best") -> None:
        super().__init__()
        self.runs = list(runs)
        self.skill = skill
        self.comparison: Comparison | None = None
        self.problem = ""
        self.loaded = 0  # tests wait on this

    def compose(self) -> ComposeResult:
        yield Label("", id="compare-header", classes="section-title")
        yield Label("", id="compare-problem")
        with ScrollableContainer(id="compare-body"):
            yield Static("loading…", id="compare-table")
        yield FittingFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#compare-problem", Label).display = False
        self._header()
        self._load(self.skill)

    def _header(self) -> None:
        names = " · ".join(distinct_names([p.name for p in self.runs], self.runs))
        self.query_one("#compare-header", Label).update(f"Compare ({self.skill}): {names}")

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def _load(self, skill: str) -> None:
        from skillopt_tui.cli.run_cards import comparison_of

        try:
            comparison, _ = comparison_of(self.runs, skill)
        except UserError as exc:
            self.post_message(ComparisonLoaded(None, str(exc)))
            return
        self.post_message(ComparisonLoaded(comparison))

    def on_comparison_loaded(self, message: ComparisonLoaded) -> None:
        self.comparison, self.problem = message.comparison, message.problem
        problem = self.query_one("#compare-problem", Label)
        problem.display = bool(self.problem)
        problem.update(Text(self.problem, style="bold red"))
        body = self.query_one("#compare-body")
        body.display = self.comparison is not None
        if self.comparison is not None:
            self.query_one("#compare-table", Static).update(comparison_text(self.comparison))
        self.loaded += 1

    def action_skill(self) -> None:
        self.skill = SKILLS[(SKILLS.index(self.skill) + 1) % len(SKILLS)]
        self._header()
        self._load(self.skill)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_help(self) -> None:
        self.app.show_help(
            "The first run is the baseline: ▲ improved, ▼ regressed, = same on each item. "
            "p is the paired sign test the gate uses. s switches between the runs' best, "
            "final and initial skills. The same tables: `skillopt compare RUN…`."
        )
