"""A scrollable unified diff with word-level highlighting (see word_diff).

By default a long line runs past the pane (scroll sideways). With `fit=True` (History)
the text fits the pane: the message above the diff wraps, and diff lines too long for
the pane end in … until `toggle_wrap()` wraps them as well, so nothing is cut unseen."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from skillopt_tui.app.widgets.word_diff import styled_diff


class DiffView(VerticalScroll):
    """Shows one diff; `show(diff, title)` replaces it. An empty diff shows `placeholder`."""

    DEFAULT_CSS = """
    DiffView { height: 1fr; }
    DiffView > Static { width: auto; min-width: 100%; }
    DiffView.-fit > Static { width: 100%; }
    """

    def __init__(self, placeholder: str = "No diff yet.", *, fit: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.placeholder = placeholder
        self.fit = fit
        self.wrap = False  # fit mode: diff lines wrapped (True) or cut with … (False)
        self._shown: tuple[str, str | Text, Text | None] | None = None
        self._body = Static(Text(placeholder, style="dim"), classes="diff-body")
        self.set_class(fit, "-fit")

    def compose(self):
        yield self._body

    def show(self, diff: str, title: str | Text = "", preamble: Text | None = None) -> None:
        """`preamble` (a commit's message, say) goes between the title and the diff."""
        self._shown = (diff, title, preamble)
        if not diff.strip() and preamble is None:
            self._body.update(Text(self.placeholder, style="dim"))
            return
        self._draw()
        self.scroll_home(animate=False)

    def text(self) -> str:
        """What the pane shows, as plain lines at its width (for tests and copying)."""
        console = Console(width=max(self._body.size.width, 20), file=io.StringIO(), record=True)
        console.print(self._body.content)
        return console.export_text()

    def toggle_wrap(self) -> bool:
        self.wrap = not self.wrap
        if self._shown is not None and (self._shown[0].strip() or self._shown[2] is not None):
            self._draw()
        return self.wrap

    def _draw(self) -> None:
        diff, title, preamble = self._shown or ("", "", None)
        text = styled_diff(diff) if diff.strip() else Text("(no changes)", style="dim")
        if self.fit and not self.wrap:
            text.no_wrap, text.overflow = True, "ellipsis"
        head = []
        if title:
            head.append(title if isinstance(title, Text) else Text(title, style="bold"))
        if preamble is not None:
            head += [preamble, Text("")]
        if not self.fit:
            text = Text.assemble(*(Text.assemble(h, "\n") for h in head), text)
            self._body.update(text)
            return
        self._body.update(Group(*head, text))  # the message wraps whatever the diff does
