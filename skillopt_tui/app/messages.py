"""Every message the app's workers send back to the UI thread.

Workers never touch widgets: they post one of these, and the screen that owns the widgets
updates them in its handler (`on_<snake_case_name>`). Keeping them in one module makes the
data flow of the whole app readable in one place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.message import Message

from skillopt_tui.app.run_feed import FeedUpdate


class RunsLoaded(Message):
    def __init__(self, rows: list[Any]) -> None:
        super().__init__()
        self.rows = rows


class SkillsLoaded(Message):
    def __init__(self, overview: Any, version: tuple | None = None) -> None:
        super().__init__()
        self.overview = overview
        self.version = version  # SkillsSource.version() when read, if the screen asked


class RunFeedUpdated(Message):
    """A coalesced batch of a run's new events (one per poll, however many events)."""

    def __init__(self, update: FeedUpdate) -> None:
        super().__init__()
        self.update = update


class StagedDiffLoaded(Message):
    def __init__(self, diff: Any, deploy_to: str | None, marks: dict | None = None) -> None:
        super().__init__()
        self.diff = diff
        self.deploy_to = deploy_to
        self.marks = marks or {}  # (hunk, lines) → PartMark: each part judged by its lines


class AdoptFinished(Message):
    def __init__(self, result: Any, hunks: list[int] | None, state: Any = None) -> None:
        super().__init__()
        self.result = result
        self.hunks = hunks
        self.state = state  # the ReviewState whose choices were adopted


class PreviewLoaded(Message):
    """The skill on main now and as it would be after the reviewed adoption."""

    def __init__(self, branch: str, before: str, after: str) -> None:
        super().__init__()
        self.branch = branch
        self.before = before
        self.after = after


class RejectFinished(Message):
    def __init__(self, archived_as: str) -> None:
        super().__init__()
        self.archived_as = archived_as


class EditReady(Message):
    """The candidate (or one hunk) is written out for $EDITOR (Review's `e`)."""

    def __init__(self, edit: Any) -> None:
        super().__init__()
        self.edit = edit  # hand_editor.EditFile


class EditStaged(Message):
    """What became of a hand edit, in one line (staged as …, or left unchanged)."""

    def __init__(self, said: str) -> None:
        super().__init__()
        self.said = said


class LogLoaded(Message):
    def __init__(self, skill: str, entries: list[Any], version: tuple | None = None) -> None:
        super().__init__()
        self.skill = skill
        self.entries = entries
        self.version = version  # SkillsSource.version() when read


class CommitDiffLoaded(Message):
    def __init__(self, sha: str, diff: str) -> None:
        super().__init__()
        self.sha = sha
        self.diff = diff


class RollbackAsked(Message):
    """What a rollback would revert (the adoption's diff and its number of hunks)."""

    def __init__(self, entry: Any, diff: str, hunks: int, live: list[int]) -> None:
        super().__init__()
        self.entry = entry
        self.diff = diff  # the hunks main still holds, as a diff
        self.hunks = hunks
        self.live = live  # the hunks main still holds (others were reverted somehow)


class RollbackFinished(Message):
    def __init__(self, commit: str, target: str) -> None:
        super().__init__()
        self.commit = commit
        self.target = target


class ActionFailed(Message):
    """A user-fixable error from a worker; shown as a notification, never a traceback."""

    def __init__(self, action: str, error: str) -> None:
        super().__init__()
        self.action = action
        self.error = error


class TrainLaunched(Message):
    def __init__(self, run_dir: Path) -> None:
        super().__init__()
        self.run_dir = run_dir


class TrainExited(Message):
    def __init__(self, returncode: int, log_tail: str) -> None:
        super().__init__()
        self.returncode = returncode
        self.log_tail = log_tail


class SleepPreviewLoaded(Message):
    """A harvest preview (sleep_data.HarvestPreview): sources, sessions, redactions."""

    def __init__(self, preview: Any) -> None:
        super().__init__()
        self.preview = preview


class NightsLoaded(Message):
    def __init__(
        self,
        context: Any,
        nights: list[Any],
        since_adoption: list[str] = (),
        preferences: list[str] = (),
    ) -> None:
        super().__init__()
        self.context = context  # sleep_data.SleepContext
        self.nights = nights  # sleep_data.NightView, newest first
        self.since_adoption = list(since_adoption)  # sleep_data.adoption_lines
        self.preferences = list(preferences)  # sleep_data.preference_lines


class MinedTasksLoaded(Message):
    def __init__(self, tasks: Any) -> None:
        super().__init__()
        self.tasks = tasks  # sleep_data.TaskList


class NightProgress(Message):
    """The latest progress line of a night started from the Sleep screen."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class NightExited(Message):
    def __init__(self, returncode: int, log_tail: str, night_id: str | None) -> None:
        super().__init__()
        self.returncode = returncode
        self.log_tail = log_tail
        self.night_id = night_id


class DeployConflict(Message):
    """The deploy target was edited by hand since we last wrote it: the screen asks whether
    to overwrite it (`retry(force=True)`) or leave everything as it is."""

    def __init__(self, action: str, error: Any, retry: Any) -> None:
        super().__init__()
        self.action = action
        self.error = error  # core.skills_repo.DeployTargetChanged: .target, .difference
        self.retry = retry  # called with no arguments to redo the action with force=True


class ComparisonLoaded(Message):
    """The Compare screen's comparison, or the one line saying why the runs cannot be."""

    def __init__(self, comparison: Any, problem: str = "") -> None:
        super().__init__()
        self.comparison = comparison  # core.research.compare.Comparison, None on a refusal
        self.problem = problem
