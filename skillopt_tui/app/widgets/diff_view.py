"""A scrollable unified diff with word-level highlighting (see word_diff)."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from skillopt_tui.app.widgets.word_diff import styled_diff


class DiffView(VerticalScroll):
    """Shows one diff; `show(diff, title)` replaces it. An empty diff shows `placeholder`."""

    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    DiffView > Static { width: auto; min-width: 100%; }
    """

    def __init__(self, placeholder: str = "No diff yet.", **kwargs) -> None:
        super().__init__(**kwargs)
        self.placeholder = placeholder
        self._body = Static(Text(placeholder, style="dim"), classes="diff-body")

    def compose(self):
        yield self._body

    def show(self, diff: str, title: str | Text = "", preamble: Text | None = None) -> None:
        """`preamble` (a commit's message, say) goes between the title and the diff."""
        if not diff.strip() and preamble is None:
            self._body.update(Text(self.placeholder, style="dim"))
            return
        text = styled_diff(diff) if diff.strip() else Text("(no changes)", style="dim")
        if preamble is not None:
            text = Text.assemble(preamble, "\n\n", text)
        if title:
            head = title if isinstance(title, Text) else Text(title, style="bold")
            text = Text.assemble(head, "\n", text)
        self._body.update(text)
        self.scroll_home(animate=False)
