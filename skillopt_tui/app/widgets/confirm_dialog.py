"""A modal question with a few lettered answers. Dismisses with the chosen value, or None
on escape. Used for adopt, reject, rollback and quit-while-training.

The answers' buttons flow onto as many rows as the dialog's width needs (a rollback offers
one per hunk): a button is never cut at the edge, at 60 columns either."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from skillopt_tui.app.widgets.fitting_footer import FittingFooter


@dataclass(frozen=True)
class Choice:
    key: str
    label: str
    value: str
    variant: str = "default"
    in_footer: bool = True  # many choices (one per hunk): their buttons alone say the keys


YES_NO = (Choice("y", "Yes", "yes", "primary"), Choice("n", "No", "no"))

# as dialogs.tcss draws them: #dialog is 90% of the screen wide (at most 100 cells) and
# high, with a thick border and one cell of padding either side; its title takes two rows,
# the buttons one row each after a blank one, the body at most 55% of the screen's height.
# Each button is its label plus Textual's line-pad and one cell of padding either side (at
# least 10), after a one-cell margin.
DIALOG_SHARE, DIALOG_MAX, DIALOG_FRAME = 0.9, 100, 4
BODY_SHARE, TITLE_ROWS, BORDER_ROWS = 0.55, 2, 2
BUTTON_PAD, BUTTON_MIN, BUTTON_MARGIN = 4, 10, 1


def button_text(choice: Choice) -> str:
    return f"{choice.label} ({choice.key})"


def button_rows(choices: tuple[Choice, ...], screen_width: int) -> list[list[Choice]]:
    """The choices in order, cut into rows that each fit the dialog's inner width."""
    room = min(int(screen_width * DIALOG_SHARE), DIALOG_MAX) - DIALOG_FRAME
    rows: list[list[Choice]] = [[]]
    used = 0
    for choice in choices:
        width = max(BUTTON_MIN, len(button_text(choice)) + BUTTON_PAD) + BUTTON_MARGIN
        if rows[-1] and used + width > room:
            rows.append([])
            used = 0
        rows[-1].append(choice)
        used += width
    return rows


class ConfirmDialog(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "choose('')", "Cancel")]

    def __init__(self, title: str, body: Text | str, choices: tuple[Choice, ...] = YES_NO) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.choices = choices
        if any(choice.value == "cancel" for choice in choices):  # one "Cancel" in the footer
            self._bindings.key_to_bindings["escape"] = [
                Binding("escape", "choose('')", "Cancel", show=False)
            ]
        # each choice's letter works as a key, and is shown in the footer
        for choice in choices:
            self._bindings.bind(
                choice.key, f"choose('{choice.value}')", choice.label, show=choice.in_footer
            )

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="dialog-title")
            with VerticalScroll(id="dialog-body"):
                yield Static(self.body)
            with Vertical(id="dialog-buttons"):
                for row in self._rows:
                    with Horizontal(classes="dialog-button-row"):
                        for choice in row:
                            yield Button(
                                button_text(choice),
                                id=f"choice-{choice.value}",
                                variant=choice.variant,
                                compact=True,
                            )
        # its own keys, covering the screen below's footer (whose y/n mean something else)
        yield FittingFooter(compact=True, show_command_palette=False)

    @property
    def _rows(self) -> list[list[Choice]]:
        return button_rows(self.choices, self.app.size.width)

    def on_mount(self) -> None:
        self._fit_body()

    def on_resize(self) -> None:
        shown = [len(row.children) for row in self.query(".dialog-button-row")]
        if shown != [len(row) for row in self._rows]:
            self.refresh(recompose=True)
        # after the refresh: a recompose replaces the body, and a resize can come before
        # the first compose has mounted it
        self.call_after_refresh(self._fit_body)

    def _fit_body(self) -> None:
        """The body scrolls rather than pushing a row of buttons out of the dialog."""
        bodies = self.query("#dialog-body")
        if not bodies:  # not mounted yet, or being replaced: the next resize or mount fits it
            return
        height = self.app.size.height
        # the dialog is centred over the screen less its footer row
        room = int((height - 1) * DIALOG_SHARE) - BORDER_ROWS - TITLE_ROWS - 1 - len(self._rows)
        bodies.first().styles.max_height = max(3, min(int(height * BODY_SHARE), room))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_choose(self, value: str) -> None:
        self.dismiss(value or None)
