"""`n`: pick a config file for a new training run (found under ./configs, or typed)."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList


def find_configs(root: Path) -> list[Path]:
    """Run configs under `root/configs`, without the shared `_base_` fragments."""
    base = root / "configs"
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*.yaml") if "_base_" not in p.parts)


class NewRunDialog(ModalScreen[Path | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, configs: list[Path]) -> None:
        super().__init__()
        self.configs = configs

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("New training run: pick a config", id="dialog-title")
            yield OptionList(*[str(p) for p in self.configs], id="config-list")
            yield Input(placeholder="or type a config path and press Enter", id="config-path")
            with Horizontal(id="dialog-buttons"):
                yield Button("Start", id="start", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.query_one(Input).value = str(self.configs[event.option_index])
        self._start()

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        value = self.query_one(Input).value.strip()
        if not value:
            self.notify("Pick a config or type its path.", severity="warning")
            return
        path = Path(value).expanduser()
        if not path.is_file():
            self.notify(f"No such config file: {path}", severity="error")
            return
        self.dismiss(path)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
