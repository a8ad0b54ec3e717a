"""Errors in screen workers reach the user: a malformed committed skills.yaml is shown on
Home (and Review) instead of blank tables; a bug in a screen worker is one notification,
never a traceback."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Label

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.worker_errors import worker_error_text
from tests.support.skills_git import plain_git
from tests.support.tui_app import SkillsRepoDouble, wait_until


def _app(runs_dir: Path, skills: Path, **kw) -> SkillOptApp:
    return SkillOptApp(runs_dir, skills, refresh_runs=False, poll_interval=0.05, **kw)


def _problem(app: SkillOptApp) -> str:
    return str(app.screen.query_one("#skills-problem", Label).render())


async def test_malformed_manifest_is_shown_not_a_blank_screen(runs_dir, skills_repo):
    (skills_repo / "skills.yaml").write_text("skills: [unclosed\n", encoding="utf-8")
    plain_git(skills_repo, "commit", "-qam", "break the manifest by hand")
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, HomeScreen) and "skills.yaml" in _problem(app),
            limit=250,
        )
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0, limit=250
        )
        body = " ".join(str(s.render()) for s in app.screen.query("#hunks Static"))
        assert "skills.yaml" in body
        await pilot.press("escape")
        await pilot.press("h")
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded > 0,
            limit=250,
        )
        assert not any("Traceback" in n.message for n in app._notifications)


class _BrokenRepo(SkillsRepoDouble):
    def staged_branches(self):
        raise RuntimeError("git exploded")


async def test_a_bug_in_a_screen_worker_is_one_notification(runs_dir):
    app = _app(runs_dir, Path("double"), repo_factory=_BrokenRepo)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot,
            lambda: any(
                n.message == "unexpected error: RuntimeError: git exploded"
                for n in app._notifications
            ),
            limit=250,
        )
        assert isinstance(app.screen, HomeScreen) and app.is_running


def test_error_text_is_short_and_names_user_errors_plainly():
    from core.errors import UserError

    assert worker_error_text(UserError("fix the thing")) == ("Error", "fix the thing")
    title, text = worker_error_text(ValueError("x" * 1000))
    assert title == "Unexpected error" and text.startswith("unexpected error: ValueError: ")
    assert len(text) <= 200
