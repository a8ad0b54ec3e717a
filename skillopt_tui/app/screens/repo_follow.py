"""Screens that show the skills repository follow it instead of remembering it: when they
show again (back from another screen) and every few seconds while open, they compare where
main and the staged branches point with what they last read, and read again if it moved
(an adopt or rollback on another screen, or `skillopt skills …` in another terminal)."""

from __future__ import annotations

from textual import work

REFRESH_S = 2.0  # as Home polls the runs directory


class FollowsRepo:
    """A mixin for a Screen: `seen` is set from `SkillsSource.version()` by each read the
    screen makes; `reread()` is that read."""

    seen: tuple | None = None
    busy: bool = False  # a write of the screen's own is under way: it rereads when done

    def follow_repo(self) -> None:
        """From on_mount: poll while open (not in snapshot tests, which run no timers)."""
        if self.app.refresh_runs:
            self.set_interval(REFRESH_S, self._check_repo)

    def on_screen_resume(self) -> None:
        if self.is_mounted and self.seen is not None:
            self._check_repo()

    def reread(self) -> None:
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="repo-check", exit_on_error=False)
    def _check_repo(self) -> None:
        if self.busy or self.seen is None:
            return
        version = self.app.skills.version()
        if version is not None and version != self.seen:
            self.app.call_from_thread(self.reread)
