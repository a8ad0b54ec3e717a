"""The Sleep screen's night started from the TUI: `r` runs `skillopt sleep run` in a child
process (the same night cron runs, for every recorded project), `x` stops it at the next
step after asking, and the progress line and the tables follow it as it goes.
"""

from __future__ import annotations

from rich.text import Text

from core.run.estimate import NO_COST
from skillopt_tui.app.messages import ActionFailed, NightExited, NightProgress
from skillopt_tui.app.night_launcher import EXIT_STOPPED
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.night_progress import NightProgressLine


class NightLaunchActions:
    """Mixed into SleepScreen (it provides `context`, `action_refresh`, `_load_nights`)."""

    def action_run_night(self) -> None:
        """Asks first, as `n` on Home does: naming the backend and what the night may
        spend, since a night on a paid backend costs money."""
        if self.app.refuses_write("run a night"):
            return
        launcher = self.app.night_launcher
        if launcher.alive:
            self.notify("A night started here is still running.", severity="warning")
            return
        if not self.context.initialised:
            self.notify(
                "Sleep is not set up: run `skillopt sleep init --project PATH` first "
                "(it records the project, the skills repository and the backend).",
                severity="warning",
                timeout=10,
            )
            return
        context = self.context
        cost = NO_COST.get(context.backend, "")
        body = Text.assemble(
            "Runs `skillopt sleep run` now, for every recorded project.\n",
            "Backend: ",
            (cost or context.backend, "bold"),
            "\nIt may spend: ",
            ("nothing" if cost else context.spend or "unknown", "bold"),
        )

        def answered(choice: str | None) -> None:
            if choice == "yes":
                self._start_night()

        self.app.push_screen(ConfirmDialog("Run a night now?", body), answered)

    def _start_night(self) -> None:
        launcher = self.app.night_launcher
        if launcher.alive:
            return
        try:
            launcher.start(self.app.state_dir)
        except OSError as exc:
            self.post_message(ActionFailed("start the night", str(exc)))
            return
        self.refresh_bindings()
        progress = self.query_one(NightProgressLine)
        progress.show("starting `skillopt sleep run`…")
        progress.follow()

    def action_stop_night(self) -> None:
        """Asks first, as x on the Run screen does: the night stops at a step boundary."""
        if not self.app.night_launcher.alive or self.app.refuses_write("stop the night"):
            return

        def answered(choice: str | None) -> None:
            if choice == "yes" and self.app.night_launcher.alive:
                self.app.night_launcher.stop()
                self.notify("Stopping the night at the next step boundary (resumable).")

        body = "It stops at the next step boundary; r here (or `skillopt sleep run`) continues it."
        self.app.push_screen(ConfirmDialog("Stop the night?", body), answered)

    def on_night_progress(self, message: NightProgress) -> None:
        self._load_nights()  # the night's run directories appear as it goes

    def on_night_exited(self, message: NightExited) -> None:
        self.refresh_bindings()
        self.action_refresh()
        night = message.night_id or "the night"
        folder = self.app.state_dir / "nights" / night
        if message.returncode == 0:
            self.query_one(NightProgressLine).show("")
            said = message.log_tail.splitlines()[-1] if message.log_tail else "finished"
            self.notify(f"{night}: {said}", title="Night finished", timeout=10)
        elif message.returncode == EXIT_STOPPED:
            said = message.log_tail.splitlines()[-1] if message.log_tail else "stopped"
            text = f"{night} stopped, resumable (press r to continue): {said} · folder {folder}"
            self.query_one(NightProgressLine).show(text)
            self.notify(text, title="Night stopped", severity="warning", timeout=12)
        else:
            self.query_one(NightProgressLine).show("")
            self.notify(
                message.log_tail or f"exit code {message.returncode}",
                title="The night failed",
                severity="error",
                timeout=12,
            )
