"""A modal question with a few lettered answers. Dismisses with the chosen value, or None
on escape. Used for adopt, reject, rollback and quit-while-training."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static


@dataclass(frozen=True)
class Choice:
    key: str
    label: str
    value: str
    variant: str = "default"


YES_NO = (Choice("y", "Yes", "yes", "primary"), Choice("n", "No", "no"))


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
            self._bindings.bind(choice.key, f"choose('{choice.value}')", choice.label)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="dialog-title")
            with VerticalScroll(id="dialog-body"):
                yield Static(self.body)
            with Horizontal(id="dialog-buttons"):
                for choice in self.choices:
                    yield Button(
                        f"{choice.label} ({choice.key})",
                        id=f"choice-{choice.value}",
                        variant=choice.variant,
                        compact=True,
                    )
        # its own keys, covering the screen below's footer (whose y/n mean something else)
        yield Footer(compact=True, show_command_palette=False)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_choose(self, value: str) -> None:
        self.dismiss(value or None)
