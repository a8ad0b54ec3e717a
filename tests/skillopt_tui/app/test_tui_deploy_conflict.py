"""History shows a commit's message and trailers above its diff; a hand-edited deploy
target stops adopt/rollback with a modal showing the difference: Cancel leaves everything,
Overwrite redoes the action with force."""

from __future__ import annotations

from pathlib import Path

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.diff_view import DiffView
from tests.support.tui_app import IDENTITY, SKILL_V1, SKILL_V2, wait_until


def _app(runs_dir: Path, skills: Path) -> SkillOptApp:
    return SkillOptApp(runs_dir, skills, refresh_runs=False, poll_interval=0.05)


def _diff_text(screen) -> str:
    return screen.query_one(DiffView).text()


async def _open_history(pilot) -> HistoryScreen:
    await pilot.press("h")
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.loaded > 0
    )
    return pilot.app.screen


async def test_history_diff_starts_with_the_commit_message_and_trailers(runs_dir, skills_repo):
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished", [1, 3])
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        history = await _open_history(pilot)
        await pilot.press("d")
        assert await wait_until(pilot, lambda: "Answer exactly" in _diff_text(history))
        text = _diff_text(history)
        assert "Adopt quiz from staged/demo-finished" in text
        assert "Adopted hunks 1,3 of 3" in text  # the body
        assert "Hunks: 1,3" in text and "Adopted-From: staged/demo-finished " in text
        assert text.index("Hunks: 1,3") < text.index("Answer exactly")


async def test_rollback_over_a_hand_edit_asks_then_overwrites(runs_dir, tmp_path, skills_repo):
    target = tmp_path / "deployed" / "SKILL.md"
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished", None)
    target.write_text(SKILL_V2 + "- my own hand-written line\n", encoding="utf-8")
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        history = await _open_history(pilot)
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ConfirmDialog) and "edited by hand" in app.screen.title_text
            ),
            limit=250,
        )
        assert "my own hand-written line" in str(app.screen.body)
        await pilot.press("c")  # cancel: nothing changes
        assert await wait_until(pilot, lambda: app.screen is history)
        assert SkillsRepo.open(skills_repo).log("quiz")[0].kind == "adopt"
        assert "hand-written" in target.read_text(encoding="utf-8")
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ConfirmDialog) and "edited by hand" in app.screen.title_text
            ),
            limit=250,
        )
        await pilot.press("o")  # overwrite
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
        assert history.entries[0].kind == "rollback"
    assert target.read_text(encoding="utf-8") == SKILL_V1


async def test_adopt_over_a_hand_edit_asks_then_overwrites(runs_dir, tmp_path, skills_repo):
    target = tmp_path / "deployed" / "SKILL.md"
    target.write_text(SKILL_V1 + "- my own hand-written line\n", encoding="utf-8")
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        review = app.screen
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, ConfirmDialog) and "edited by hand" in app.screen.title_text
            ),
            limit=250,
        )
        await pilot.press("o")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
    assert SkillsRepo.open(skills_repo).read_skill("quiz") == SKILL_V2
    assert target.read_text(encoding="utf-8") == SKILL_V2
