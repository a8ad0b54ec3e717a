"""`n`: pick a config file for a new training run (found under ./configs, or typed), and
when a skills repository is open, the skill the run stages its candidates into."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select

from skillopt_tui.app.widgets.fitting_footer import FittingFooter

NO_SKILL = "__none__"


def find_configs(root: Path) -> list[Path]:
    """Run configs under `root/configs`, without the shared `_base_` fragments."""
    base = root / "configs"
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*.yaml") if "_base_" not in p.parts)


@dataclass(frozen=True)
class NewRunChoice:
    config: Path
    skill: str | None = None  # stage into this skill of the open skills repo; None: don't


class NewRunDialog(ModalScreen[NewRunChoice | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#config-list, #config-path"  # the list if any config was found

    def __init__(
        self, configs: list[Path], skills: list[str] | None = None, config_root: Path | None = None
    ) -> None:
        super().__init__()
        self.configs = configs
        self.skills = list(skills or [])
        self.config_root = config_root

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("New training run: pick a config", id="dialog-title")
            if self.skills:
                with Horizontal(id="skill-row"):
                    yield Label("Stage into skill ", id="skill-label")
                    yield Select(
                        [(name, name) for name in self.skills]
                        + [("none (stage nothing)", NO_SKILL)],
                        value=self.skills[0],
                        allow_blank=False,
                        id="skill-select",
                    )
            if self.configs:
                yield OptionList(*[str(p) for p in self.configs], id="config-list")
            else:
                where = self.config_root / "configs" if self.config_root else "./configs"
                yield Label(f"No configs found under {where}: type a config path.", id="no-configs")
            yield Input(placeholder="or type a config path and press Enter", id="config-path")
            with Horizontal(id="dialog-buttons"):
                yield Button("Start", id="start", variant="primary")
                yield Button("Cancel (esc)", id="cancel")
        yield FittingFooter(compact=True, show_command_palette=False)  # hides the screen's keys

    def chosen_skill(self) -> str | None:
        if not self.skills:
            return None
        value = self.query_one("#skill-select", Select).value
        return None if value in (NO_SKILL, Select.BLANK) else str(value)

    @on(OptionList.OptionSelected, "#config-list")
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
        self.dismiss(NewRunChoice(path, self.chosen_skill()))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
