"""`n`: pick a config file for a new training run (found under ./configs, or typed), and
when a skills repository is open, the skill the run stages its candidates into.

One input does both, as in a fuzzy finder: typing filters the configs (every word must
appear in the path), ↑/↓ move in the list, Enter starts the highlighted config, or the
typed path when it names a file. The list takes the room that is left, so the input and
the buttons stay on screen at 60×18."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
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


def matching(configs: list[Path], typed: str) -> list[Path]:
    """The configs whose path holds every word typed (any case, any order)."""
    words = typed.lower().split()
    return [p for p in configs if all(w in str(p).lower() for w in words)]


class NewRunDialog(ModalScreen[NewRunChoice | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "highlight(1)", "Next config", show=False, priority=True),
        Binding("up", "highlight(-1)", "Previous config", show=False, priority=True),
    ]
    AUTO_FOCUS = "#config-path"  # type to filter, or a path

    def __init__(
        self, configs: list[Path], skills: list[str] | None = None, config_root: Path | None = None
    ) -> None:
        super().__init__()
        self.configs = configs
        self.skills = list(skills or [])
        self.config_root = config_root
        self.shown = list(configs)  # the configs the filter leaves, in the list's order

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
                        compact=True,
                        id="skill-select",
                    )
            hint = "type to filter, or a config path; Enter starts"
            if not self.configs:
                where = self.config_root / "configs" if self.config_root else "./configs"
                yield Label(f"No configs found under {where}: type a config path.", id="no-configs")
                hint = "type a config path and press Enter"
            yield Input(placeholder=hint, id="config-path", compact=True)
            if self.configs:
                yield Label("", id="config-count")
                yield OptionList(*[self._shown_name(p) for p in self.configs], id="config-list")
            with Horizontal(id="dialog-buttons"):
                yield Button("Start", id="start", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)
        yield FittingFooter(compact=True, show_command_palette=False)  # hides the screen's keys

    def chosen_skill(self) -> str | None:
        if not self.skills:
            return None
        value = self.query_one("#skill-select", Select).value
        return None if value in (NO_SKILL, Select.BLANK) else str(value)

    def _shown_name(self, path: Path) -> Text:
        """Relative to where configs are looked for: shorter, so the file name that tells
        two configs apart fits."""
        root = self.config_root or Path.cwd()
        try:
            name = str(path.relative_to(root))
        except ValueError:
            name = str(path)
        return Text(name, no_wrap=True, overflow="ellipsis")

    def on_mount(self) -> None:
        self._count()

    @on(Input.Changed, "#config-path")
    def _filter(self, event: Input.Changed) -> None:
        if not self.configs:
            return
        self.shown = matching(self.configs, event.value)
        options = self.query_one("#config-list", OptionList)
        options.clear_options()
        options.add_options([self._shown_name(p) for p in self.shown])
        options.highlighted = 0 if self.shown else None
        self._count()

    def _count(self) -> None:
        if self.configs:
            text = f"{len(self.shown)} of {len(self.configs)} configs"
            self.query_one("#config-count", Label).update(text)

    def action_highlight(self, delta: int) -> None:
        lists = self.query("#config-list")
        if lists and self.shown:
            options = lists.first(OptionList)
            now = options.highlighted if options.highlighted is not None else -delta
            options.highlighted = max(0, min(len(self.shown) - 1, now + delta))

    @on(OptionList.OptionSelected, "#config-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self._start_with(self.shown[event.option_index])

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        """The typed path when it names a file, else the highlighted config."""
        value = self.query_one(Input).value.strip()
        typed = Path(value).expanduser() if value else None
        lists = self.query("#config-list")
        highlighted = lists.first(OptionList).highlighted if lists else None
        if (typed is None or not typed.is_file()) and highlighted is not None and self.shown:
            self._start_with(self.shown[highlighted])
            return
        if typed is None:
            self.notify("Pick a config or type its path.", severity="warning")
            return
        self._start_with(typed)

    def _start_with(self, path: Path) -> None:
        if not path.is_file():
            said = f"No such config file: {path}"
            if self.configs:
                said += " (and no listed config matches it: clear the filter to see them all)"
            self.notify(said, severity="error")
            return
        self.dismiss(NewRunChoice(path, self.chosen_skill()))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
