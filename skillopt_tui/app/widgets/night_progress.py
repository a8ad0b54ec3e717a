"""The progress line of a night started from the Sleep screen.

It follows the child process (`app.night_launcher`) in a thread worker: it shows the
night's latest line, posts `NightProgress` when it changes and every few seconds (the
screen reloads the nights: run directories appear as the night goes), and `NightExited`
when the process ends. Leaving the screen stops the following, not the night; the next
Sleep screen picks it up again.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from skillopt_tui.app.messages import NightExited, NightProgress
from skillopt_tui.app.worker_errors import report_worker_error

POLL_S = 0.5
NIGHTS_EVERY_S = 2.0


class NightProgressLine(Static):
    def on_mount(self) -> None:
        self.display = False

    def show(self, line: str) -> None:
        self.display = bool(line)
        self.update(Text.assemble(("night ▶ ", "bold green"), line))

    def on_night_progress(self, message: NightProgress) -> None:
        self.show(message.line)  # and it bubbles on to the screen

    @work(thread=True, exclusive=True, group="sleep-night", exit_on_error=False)
    def follow(self) -> None:
        worker = get_current_worker()
        launcher = self.app.night_launcher
        last_line, last_post = "", 0.0
        while launcher.alive and not worker.is_cancelled:
            line = launcher.progress()
            if line != last_line or time.monotonic() - last_post > NIGHTS_EVERY_S:
                last_line, last_post = line, time.monotonic()
                self.post_message(NightProgress(line))
            time.sleep(POLL_S)
        if worker.is_cancelled or launcher.process is None:
            return
        code = launcher.process.wait()
        self.post_message(NightExited(code, launcher.log_tail(), launcher.night_id()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)
