"""The TUI recomputes from the repository instead of remembering: a hunk rolled back on
main is reviewable again, the rollback dialog offers only what is still live, History shows
what was rolled back, and Review says the conflict the CLI names."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from tests.support.tui_app import IDENTITY, SKILL_V1, wait_until


def _app(runs_dir: Path, skills: Path) -> SkillOptApp:
    return SkillOptApp(runs_dir, skills, refresh_runs=False, poll_interval=0.05)


async def _open(pilot, key: str, kind: type, loaded: int = 0):
    await pilot.press(key)
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, kind) and pilot.app.screen.loaded > loaded
    )
    return pilot.app.screen


def _marks(review: ReviewScreen) -> list[str]:
    return [item.decision for item in review.state.items]


def _messages(app: SkillOptApp) -> str:
    return " ".join(n.message for n in app._notifications)


async def test_a_hunk_rolled_back_in_history_is_reviewable_again(runs_dir, skills_repo):
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _open(pilot, "v", ReviewScreen)
        await pilot.press("y", "n", "n", "A")  # adopt hunk 1 only: the branch stays staged
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        assert _marks(review) == ["adopted", "rejected", "rejected"]
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        history = await _open(pilot, "h", HistoryScreen)
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")  # roll the whole adoption back
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
        assert SkillsRepo.open(skills_repo).read_skill("quiz") == SKILL_V1
        await pilot.press("escape")
        review = await _open(pilot, "v", ReviewScreen)
        assert _marks(review) == ["pending", "rejected", "rejected"]
        assert "on main" not in str(review.query_one("#hunks").children[0].content)
        assert "#1 no longer on main" in str(review.query_one("#review-status").render())
        await pilot.press("k", "k", "y")
        assert "already on main" not in _messages(app)
        assert review.state.selection() == ([1], {})


async def test_review_below_history_recomputes_when_it_shows_again(runs_dir, skills_repo):
    """Review stays open under History (the palette goes there); coming back to it reloads
    the branch from the repository."""
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _open(pilot, "v", ReviewScreen)
        await pilot.press("y", "n", "n", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        loaded = review.loaded
        history = HistoryScreen("quiz")
        app.push_screen(history)
        assert await wait_until(pilot, lambda: history.loaded > 0)
        # behind the TUI's back, as `skillopt skills rollback quiz` in another terminal does
        SkillsRepo.open(skills_repo, identity=IDENTITY).rollback("quiz")
        app.pop_screen()
        assert await wait_until(pilot, lambda: review.loaded > loaded, limit=250)
        assert _marks(review) == ["pending", "rejected", "rejected"]


async def test_adopting_only_a_conflicting_hunk_names_the_conflict(runs_dir, skills_repo):
    """The CLI refuses `--hunks 2` naming the conflict; A says the same, not "No hunk
    approved yet" (hunk 2 was approved)."""
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    edited = SKILL_V1.replace("boiling point of water: 100 C", "boiling point of water: 99.97 C")
    repo.stage("quiz", "hand", edited, subject="s", trailers={"Step": "1"})
    repo.adopt("staged/hand")
    main = repo.main_sha()
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _open(pilot, "v", ReviewScreen)
        assert [h.conflicts for h in review.diff.hunks] == [False, True, False]
        await pilot.press("n", "y", "n", "A")
        assert _marks(review) == ["rejected", "approved", "rejected"]
        said = _messages(app)
        assert "No hunk approved" not in said
        assert "hunk #2 conflicts with changes made on main since the branch was staged" in said
        assert not isinstance(app.screen, ConfirmDialog)
    assert SkillsRepo.open(skills_repo).main_sha() == main  # nothing adopted


def _adopted_then_hunk_2_rolled_back(skills_repo: Path) -> SkillsRepo:
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    repo.adopt("staged/demo-finished")
    repo.rollback("quiz", hunks=[2])
    return repo


def _buttons(app: SkillOptApp) -> list[str]:
    return [str(b.label) for b in app.screen.query("Button")]


async def test_rollback_offers_only_live_hunks_and_history_marks_rollbacks(runs_dir, skills_repo):
    _adopted_then_hunk_2_rolled_back(skills_repo)
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        history = await _open(pilot, "h", HistoryScreen)
        table = history.query_one("#log")
        assert str(table.get_row_at(0)[1]) == "rollback"
        adopt_row = [str(cell) for cell in table.get_row_at(1)]
        assert adopt_row[1] == "adopt" and "hunk 2 rolled back" in adopt_row[3]
        await pilot.press("down")
        assert await wait_until(
            pilot, lambda: "Hunk 2 rolled back by" in history.query_one("#commit-diff").text()
        )
        await pilot.press("R")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmDialog) and _buttons(app)
        )
        assert _buttons(app) == [
            "Roll back the rest (y)",
            "Only hunk 1 (1)",
            "Only hunk 3 (3)",
            "No (n)",
        ]
        assert "hunk 2 was rolled back already" in str(app.screen.body)
        await pilot.press("2")  # not offered: nothing happens
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
        assert SkillsRepo.open(skills_repo).read_skill("quiz") == SKILL_V1
        assert await wait_until(
            pilot, lambda: "rolled back" in str(history.query_one("#log").get_row_at(2)[3])
        )
        await pilot.press("down", "R")  # row 2, the adoption: the whole of it is undone now
        assert await wait_until(pilot, lambda: "already rolled back" in _messages(app))
        assert not isinstance(app.screen, ConfirmDialog)


async def test_history_below_another_screen_reads_the_log_again(runs_dir, skills_repo):
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    repo.adopt("staged/demo-finished")
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        history = await _open(pilot, "h", HistoryScreen)
        loaded = history.loaded
        assert history.query_one("#log").row_count == 2
        app.open_review()
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        repo.rollback("quiz", hunks=[2])  # from another terminal
        app.pop_screen()
        assert await wait_until(pilot, lambda: history.loaded > loaded, limit=250)
        assert history.query_one("#log").row_count == 3


@pytest.mark.parametrize("size", [(80, 24), (60, 18)], ids=["80x24", "60x18"])
async def test_every_rollback_button_shows_whole_at_80_and_60_columns(runs_dir, skills_repo, size):
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished")
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=size) as pilot:
        await _open(pilot, "h", HistoryScreen)
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause(0.1)
        dialog = app.screen.query_one("#dialog").region
        buttons = list(app.screen.query("Button"))
        assert [str(b.label) for b in buttons] == [
            "Roll back all (y)",
            "Only hunk 1 (1)",
            "Only hunk 2 (2)",
            "Only hunk 3 (3)",
            "No (n)",
        ]
        for button in buttons:
            region = button.region
            assert region.width >= len(str(button.label)) and dialog.contains_region(region), (
                f"{button.label} at {region} is cut by the dialog at {dialog}"
            )
        footer = app.screen.query_one("Footer")
        assert all(b.region.y < footer.region.y for b in buttons)


async def test_the_review_status_line_says_the_news_first_and_marks_a_cut(runs_dir, skills_repo):
    """At 80 columns the status line once ended mid-sentence with the news of a rolled-back
    hunk wrapped out of sight; now the news comes before the reminder, and a cut ends in …."""
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await _open(pilot, "v", ReviewScreen)
        await pilot.press("y", "n", "n", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        SkillsRepo.open(skills_repo, identity=IDENTITY).rollback("quiz")
        await pilot.press("escape", "v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        status = app.screen.query_one("#review-status")
        await pilot.pause(0.1)
        shown = app.screen._compositor.render_strips()[status.region.y].text
        shown = shown[status.region.x : status.region.right].strip()
        assert shown.startswith("hunk ") and "#1 no longer on main" in shown
        assert shown.endswith("…") or shown.endswith("decisions kept for this session")
