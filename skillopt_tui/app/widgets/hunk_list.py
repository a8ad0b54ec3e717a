"""The staged diff as numbered hunks, each marked pending / approved / rejected, with the
current one highlighted. Decisions live in the review screen; this only draws them."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from skillopt_tui.app.widgets.word_diff import styled_lines

MARKS = {
    "pending": ("[ ]", "dim"),
    "approved": ("[y]", "bold green"),
    "rejected": ("[n]", "bold red"),
    "adopted": ("[=]", "cyan"),  # already on main (an earlier partial adopt)
}


def hunk_text(hunk: Any, decision: str, show_file: bool = False) -> Text:
    mark, style = MARKS[decision]
    head = Text.assemble(
        (mark, style),
        " ",
        (f"#{hunk.index}", "bold"),
        " ",
        (f"{hunk.file} " if show_file else "", "bold"),
        (hunk.header, "cyan"),
        (f"  +{hunk.added} -{hunk.removed}", "dim"),
        ("  adopted (on main)" if decision == "adopted" else "", "cyan"),
    )
    return Text("\n").join([head, *styled_lines(list(hunk.lines))])


class HunkView(Static):
    def __init__(self, hunk: Any, show_file: bool) -> None:
        super().__init__(hunk_text(hunk, "pending", show_file), classes="hunk")
        self.hunk = hunk
        self.show_file = show_file

    def set_decision(self, decision: str) -> None:
        self.update(hunk_text(self.hunk, decision, self.show_file))
        self.set_class(decision == "approved", "-approved")
        self.set_class(decision == "rejected", "-rejected")
        self.set_class(decision == "adopted", "-adopted")


class HunkList(VerticalScroll):
    can_focus = True
    # ↑/↓ move between hunks (the screen's move), not scroll a line
    BINDINGS = [
        Binding("down", "screen.move(1)", show=False),
        Binding("up", "screen.move(-1)", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.views: list[HunkView] = []

    async def set_hunks(self, hunks: list[Any], empty_text: str = "No hunks.") -> None:
        await self.remove_children()
        several_files = len({h.file for h in hunks}) > 1
        self.views = [HunkView(h, several_files) for h in hunks]
        if self.views:
            await self.mount_all(self.views)
        else:
            await self.mount(Static(Text(empty_text, style="dim"), classes="hunk-empty"))
        self.scroll_home(animate=False)

    def show_decision(self, position: int, decision: str) -> None:
        self.views[position].set_decision(decision)

    def set_current(self, position: int) -> None:
        for i, view in enumerate(self.views):
            view.set_class(i == position, "-current")
        if 0 <= position < len(self.views):
            self.scroll_to_widget(self.views[position], animate=False, top=True)
