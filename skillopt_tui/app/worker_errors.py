"""One way to report a worker that died, for the App and for every screen.

`Worker.StateChanged` does not bubble: it reaches only the node that started the worker.
So the App's handler never sees a screen's workers; each screen needs the same handler, or
an error in a screen worker would leave a blank screen and no word about why.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from core.errors import UserError

MAX_CHARS = 200


def worker_error_text(error: BaseException) -> tuple[str, str]:
    """(title, message): a UserError's own one line; anything else a short summary, never a
    traceback."""
    if isinstance(error, UserError):
        return "Error", str(error)
    text = f"unexpected error: {type(error).__name__}: {error}"
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1] + "…"
    return "Unexpected error", text


def report_worker_error(node: DOMNode, event: Worker.StateChanged) -> None:
    if event.state == WorkerState.ERROR and event.worker.error is not None:
        title, message = worker_error_text(event.worker.error)
        node.notify(message, title=title, severity="error", timeout=12)


LIST_KEYS = [  # lazygit's habit: j/k move in whichever list has focus
    Binding("j", "list_cursor(1)", "Down", show=False, tooltip="Move down in the list"),
    Binding("k", "list_cursor(-1)", "Up", show=False, tooltip="Move up in the list"),
]


class AppScreen(Screen):
    """Base of the app's full screens: their workers' errors are notified like the App's.
    Screens with lists add LIST_KEYS to their bindings (Review binds j/k to hunks)."""

    def action_list_cursor(self, delta: int) -> None:
        widget = self.focused
        action = "action_cursor_down" if delta > 0 else "action_cursor_up"
        if widget is not None and hasattr(widget, action):
            getattr(widget, action)()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)
