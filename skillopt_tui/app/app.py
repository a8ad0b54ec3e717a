"""SkillOptApp: a thin shell that owns the sources of state (runs directory, skills repo,
a launched training process) and moves between screens. Screens do their own work."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker

from core import exit_codes
from core.errors import UserError
from skillopt_tui.app.messages import ActionFailed, TrainExited, TrainLaunched
from skillopt_tui.app.night_launcher import NightLauncher
from skillopt_tui.app.review_state import ReviewStates
from skillopt_tui.app.screens.compare import CompareScreen
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.app.screens.loading import LoadingScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.screens.sleep import SleepScreen
from skillopt_tui.app.skills_data import SkillsSource
from skillopt_tui.app.train_launcher import TrainLauncher
from skillopt_tui.app.widgets.confirm_dialog import Choice, ConfirmDialog
from skillopt_tui.app.widgets.help_screen import HelpScreen
from skillopt_tui.app.widgets.new_run_dialog import NewRunChoice, NewRunDialog, find_configs
from skillopt_tui.app.worker_errors import report_worker_error
from sleep.harvest.run import default_state_dir

STYLES = Path(__file__).parent / "styles"
STOPPED_EXIT = exit_codes.STOPPED  # `skillopt train`: stopped at a step boundary, resumable


# keys that move, navigate or open what the palette already opens: not listed for other
# screens (they mean nothing before the screen is on view)
NOT_FROM_ELSEWHERE = frozenset(
    {"back", "help", "move", "open", "review", "history", "app.quit", "quit", "list_cursor", "mark"}
)


class SkillOptApp(App[None]):
    TITLE = "SkillOpt"
    CSS_PATH = [
        STYLES / "app.tcss",
        STYLES / "run.tcss",
        STYLES / "review.tcss",
        STYLES / "dialogs.tcss",
        STYLES / "sleep.tcss",
        STYLES / "compare.tcss",
    ]
    # "-narrow" under 80 columns: side columns shrink so the diff keeps its room
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-normal")]
    BINDINGS = [
        Binding("q", "quit", "Quit", show=False),
        Binding("ctrl+p", "command_palette", "Commands", show=False),
    ]

    def __init__(
        self,
        runs_dir: Path,
        skills_repo: Path | None = None,
        run: Path | None = None,
        *,
        repo_factory: Callable[[Path], Any] | None = None,
        poll_interval: float = 0.3,
        refresh_runs: bool = True,
        config_root: Path | None = None,
        state_dir: Path | None = None,
        read_only: str | None = None,
    ) -> None:
        super().__init__()
        # a second `skillopt tui` on the skills repository, terminal or browser session
        # (skillopt_tui.writer_lock): the sentence saying why it may not write, None when
        # it may
        self.read_only = read_only
        self.runs_dir = Path(runs_dir)
        self.skills = SkillsSource(Path(skills_repo) if skills_repo else None, repo_factory)
        self.initial_run = Path(run) if run else None
        self.poll_interval = poll_interval
        self.refresh_runs = refresh_runs  # off in snapshot tests: no timers
        self.config_root = config_root or Path.cwd()
        self.launcher = TrainLauncher()
        self.review_states = ReviewStates()  # review decisions per branch, for the session
        self.state_dir = Path(state_dir) if state_dir else default_state_dir()  # Sleep's
        self.night_launcher = NightLauncher()
        self.theme = "textual-dark"

    def on_mount(self) -> None:
        self.open_home()
        if self.initial_run is not None:
            self.open_run(self.initial_run)
        if self.read_only:
            self.sub_title = "read-only"
            self.notify(self.read_only, title="Read-only session", severity="warning", timeout=20)

    def refuses_write(self, what: str) -> bool:
        """True (and says so) when this session may not write: every key and palette
        command that changes the skills repository or starts or stops a process asks this
        first, so a read-only session opens no dialog it could not honour."""
        if not self.read_only:
            return False
        self.notify(
            self.read_only, title=f"Cannot {what} in this session", severity="warning", timeout=10
        )
        return True

    # navigation

    def open_home(self) -> None:
        self.push_screen(HomeScreen())

    def open_run(self, run_dir: Path) -> None:
        self.push_screen(RunScreen(run_dir))

    def open_review(self, skill: str | None = None, branch: str | None = None) -> None:
        self.push_screen(ReviewScreen(skill, branch=branch))

    def open_history(self, skill: str | None = None) -> None:
        self.push_screen(HistoryScreen(skill))

    def open_sleep(self) -> None:
        self.push_screen(SleepScreen())

    def open_compare(self, runs: list[Path]) -> None:
        self.push_screen(CompareScreen(runs))

    def show_help(self, intro: str = "") -> None:
        self.push_screen(HelpScreen(self.screen, intro))

    # command palette: the screens from anywhere, and every binding of the current screen

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title.lower().startswith("quit"):
                yield SystemCommand(
                    "Quit", "Leave SkillOpt (asks first if a run is going)", self.action_quit
                )
            else:
                yield command
        yield from self._screen_commands(screen)
        yield from self._other_screens_actions(screen)
        seen: set[str] = {"quit", "app.quit", "command_palette", "list_cursor"}
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if (
                not isinstance(active.node, Screen)
                or not binding.description
                or binding.action.split("(")[0] in seen
                or binding.action in seen
            ):
                continue
            seen.add(binding.action)
            where = type(active.node).__name__.removesuffix("Screen")
            yield SystemCommand(
                f"{binding.description} ({self.get_key_display(binding) or key})",
                binding.tooltip or f"{binding.description}, here on {where} (key {key})",
                partial(active.node.run_action, binding.action),
            )

    def _screen_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every screen, reachable from any other (then its own keys and commands apply)."""
        places = [
            (
                "Home: runs and skills",
                "The runs directory and the skills repository",
                HomeScreen,
                self.open_home,
            ),
            (
                "Review staged branches",
                "Approve, reject, split and adopt hunks of a staged branch",
                ReviewScreen,
                self.open_review,
            ),
            (
                "History of skills on main",
                "Adoptions and rollbacks; roll back an adoption",
                HistoryScreen,
                self.open_history,
            ),
            (
                "Sleep: transcripts and nights",
                "What the nightly companion reads, its nights and mined tasks; run a night",
                SleepScreen,
                self.open_sleep,
            ),
        ]
        for title, help_text, kind, go in places:
            if not isinstance(screen, kind):
                yield SystemCommand(title, help_text, partial(self._switch_to, kind, go))
        yield SystemCommand("New run", "Start a training run from a config", self.action_new_run)

    # what each other screen's keys do, run from the palette: (screen, its name, opener)
    def _other_screens_actions(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every key of Home, Review and History from any other screen: the command opens
        that screen (on its selection: the first branch, the newest commit) and, once it
        has loaded, runs the action there, as the key would."""
        places = [
            (HomeScreen, "Home", self.open_home),
            (ReviewScreen, "Review", self.open_review),
            (HistoryScreen, "History", self.open_history),
        ]
        for kind, name, go in places:
            if isinstance(screen, kind):
                continue  # its own keys are listed below, as they are
            for binding in kind.BINDINGS:
                action = binding.action
                if not binding.description or action.split("(")[0] in NOT_FROM_ELSEWHERE:
                    continue
                key = self.get_key_display(binding) or binding.key
                title = f"{name}: {binding.description} ({key})"
                help_text = binding.tooltip or binding.description
                yield SystemCommand(
                    title,
                    f"{help_text}, on {name} (opens it)",
                    partial(self._run_on, kind, go, action),
                )

    def _run_on(self, kind: type[Screen], open_new, action: str) -> None:
        """Go to `kind` (the one open, else a new one), then run `action` once its data is
        in, so the action sees what the user would have seen."""
        self._switch_to(kind, open_new)
        target = self.screen  # pushing and popping change the stack at once
        if isinstance(target, LoadingScreen):
            target.when_loaded(partial(target.run_action, action))
        else:
            self.call_later(target.run_action, action)

    def _switch_to(self, kind: type[Screen], open_new) -> None:
        """The palette goes to a screen rather than stacking another copy of it: back to the
        one already open (the screens above it close, as Escape would; review decisions
        live in the app and survive), else `open_new` opens one."""
        if not any(isinstance(screen, kind) for screen in self.screen_stack):
            open_new()
            return
        while not isinstance(self.screen, kind):
            self.pop_screen()

    # errors from workers

    def on_action_failed(self, message: ActionFailed) -> None:
        self.notify(message.error, title=f"Could not {message.action}", severity="error", timeout=8)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """An App worker died (a bug, or git failing in a way we did not foresee): say so in
        one notification and keep the app usable. Screens do the same for their own."""
        report_worker_error(self, event)

    # training runs started from the TUI

    def action_new_run(self) -> None:
        if self.refuses_write("start a run"):
            return
        if self.launcher.alive:
            self.notify(
                "A run started here is still going; stop it (x on its Run screen) first.",
                severity="warning",
            )
            return

        self._open_new_run_dialog()

    @work(thread=True, exclusive=True, group="new-run", exit_on_error=False)
    def _open_new_run_dialog(self) -> None:
        """Reads the configs and the skills repo's skills (blocking) for the dialog."""
        skills: list[str] = []
        if self.skills.path is not None:
            try:
                skills = [entry.name for entry in self.skills.repo().list_skills()]
            except UserError as exc:
                self.post_message(ActionFailed("list the skills to stage into", str(exc)))
        configs = find_configs(self.config_root)

        def picked(choice: NewRunChoice | None) -> None:
            if choice is not None:
                self._launch(choice.config, choice.skill)

        self.call_from_thread(
            self.push_screen, NewRunDialog(configs, skills, self.config_root), picked
        )

    @work(thread=True, exclusive=True, group="train", exit_on_error=False)
    def _launch(self, config: Path, skill: str | None = None) -> None:
        try:
            process = self.launcher.start(
                config, self.runs_dir, self.skills.path if skill else None, skill
            )
        except OSError as exc:
            self.post_message(ActionFailed("start the run", str(exc)))
            return
        run_dir = self.launcher.wait_for_events()
        if run_dir is not None:
            self.post_message(TrainLaunched(run_dir))
        code = process.wait()
        self.post_message(TrainExited(code, self.launcher.finished_tail()))

    @work(thread=True, exclusive=True, group="train", exit_on_error=False)
    def resume_run(self, cmd: list[str], run_dir: Path) -> None:
        """Resumes a stopped run in the background; its Run screen follows it."""
        try:
            process = self.launcher.start_command(cmd, run_dir)
        except OSError as exc:
            self.post_message(ActionFailed("resume the run", str(exc)))
            return
        for screen in self.screen_stack:
            self.call_from_thread(screen.refresh_bindings)
        code = process.wait()
        self.post_message(TrainExited(code, self.launcher.finished_tail()))

    def on_train_launched(self, message: TrainLaunched) -> None:
        self.open_run(message.run_dir)

    def on_train_exited(self, message: TrainExited) -> None:
        for screen in self.screen_stack:  # `x Stop run` leaves the footer with the process
            screen.refresh_bindings()
        if message.returncode == 0:
            self.notify("The training run finished.", title="Run finished")
        elif message.returncode == STOPPED_EXIT:
            command = shlex.join(self.launcher.command) if self.launcher.command else ""
            self.notify(
                "The training run stopped; resume it with r on its Run screen"
                + (f", or run: {command}" if command else "."),
                title="Run stopped",
                severity="warning",
                timeout=12,
            )
        else:
            self.notify(
                message.log_tail or f"exit code {message.returncode}",
                title="The training run stopped",
                severity="error",
                timeout=10,
            )

    def stop_launched_run(self) -> None:
        if self.refuses_write("stop the run"):
            return
        if not self.launcher.alive:
            self.notify("No run started from this window is running.", severity="warning")
            return
        self.launcher.stop()
        self.notify("Stopping at the next step boundary (resumable).")

    async def action_quit(self) -> None:
        if not self.launcher.alive:
            self.exit()
            return

        def answered(choice: str | None) -> None:
            if choice == "stop":
                self.launcher.stop()
                self.exit()
            elif choice == "detach":
                self.exit()

        self.push_screen(
            ConfirmDialog(
                "A training run started here is still running",
                "Detach: it keeps running; follow it later with `skillopt tui`.\n"
                "Stop: it stops at the next step boundary and can be resumed.",
                (
                    Choice("d", "Detach", "detach", "primary"),
                    Choice("s", "Stop", "stop", "warning"),
                    Choice("c", "Cancel", "cancel"),
                ),
            ),
            answered,
        )
