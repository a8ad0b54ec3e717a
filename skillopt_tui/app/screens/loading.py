"""Screens whose data arrives from a worker: a count of loads shown, and actions that wait
for the first one.

The palette can run another screen's key there ("History: Roll back (R)" from Review);
the action must see what the user would have seen, so it waits for the screen's data
instead of polling for it against a clock, which a loaded machine outruns.
"""

from __future__ import annotations

from collections.abc import Callable

from skillopt_tui.app.worker_errors import AppScreen


class LoadingScreen(AppScreen):
    def __init__(self) -> None:
        super().__init__()
        self.loaded = 0  # loads shown; tests wait on it
        self._after_load: list[Callable[[], object]] = []

    def mark_loaded(self) -> None:
        self.loaded += 1
        waiting, self._after_load = self._after_load, []
        for callback in waiting:
            self.call_later(callback)

    def when_loaded(self, callback: Callable[[], object]) -> None:
        """Runs `callback` once the screen shows its data: now if it does already."""
        if self.loaded:
            self.call_later(callback)
        else:
            self._after_load.append(callback)
