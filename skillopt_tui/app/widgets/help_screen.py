"""`?`: the keys of the screen it was opened from, in one table."""

from __future__ import annotations

from rich.table import Table
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

from skillopt_tui.app.widgets.fitting_footer import FittingFooter


def keys_table(screen: Screen) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    seen = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or binding.action in seen:
            continue
        if not isinstance(active.node, Screen | App):  # a widget's scroll keys: noise
            continue
        seen.add(binding.action)
        table.add_row(screen.app.get_key_display(binding) or key, binding.description)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, for_screen: Screen, intro: str = "") -> None:
        super().__init__()
        self.table = keys_table(for_screen)
        self.intro = intro

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Keys", id="dialog-title")
            with VerticalScroll(id="dialog-body"):
                if self.intro:
                    yield Static(self.intro, classes="help-intro")
                yield Static(self.table)
        yield FittingFooter(compact=True, show_command_palette=False)  # hides the screen's keys
