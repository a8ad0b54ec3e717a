"""A read-only session (the second browser session of `skillopt tui --web`) says so when it
opens, and refuses every write before any question is asked: adopt, reject and rollback
change nothing in the real skills repository, a new run starts nothing."""

from __future__ import annotations

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from tests.support.skills_git import plain_git
from tests.support.tui_app import IDENTITY, wait_until

WHY = "Read-only: another browser session drives the writes."


def _said(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def _refs(skills_repo) -> str:
    return plain_git(skills_repo, "for-each-ref", "--format=%(refname) %(objectname)")


async def test_a_read_only_session_says_so_and_refuses_every_write(runs_dir, skills_repo):
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished", [2])
    before = _refs(skills_repo)
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, read_only=WHY)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(pilot, lambda: any(WHY in s for s in _said(app)))
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        await pilot.press("y", "A")
        assert await wait_until(pilot, lambda: any("Cannot adopt" in s for s in _said(app)))
        await pilot.press("r")
        assert await wait_until(pilot, lambda: any("Cannot reject" in s for s in _said(app)))
        assert not isinstance(app.screen, ConfirmDialog)
        await pilot.press("escape", "h")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded > 0
        )
        await pilot.press("R")
        assert await wait_until(pilot, lambda: any("Cannot roll back" in s for s in _said(app)))
        assert not isinstance(app.screen, ConfirmDialog)
        await pilot.press("escape", "n")
        assert await wait_until(pilot, lambda: any("Cannot start a run" in s for s in _said(app)))
        assert not app.launcher.alive
    assert _refs(skills_repo) == before


async def test_the_writing_session_adopts_as_before(runs_dir, skills_repo):
    """The same keys in a session that may write reach git (the refusal is the flag's)."""
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        await pilot.press("y", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: any("Adopted" in s for s in _said(app)), limit=250)
    assert SkillsRepo.open(skills_repo).log("quiz")[0].kind == "adopt"
