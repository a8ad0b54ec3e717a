"""lazygit habits outside Review: the palette reaches every screen from anywhere with words
that say what a command does, one Quit entry; j/k move in every list."""

from __future__ import annotations

from pathlib import Path

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from tests.support.tui_app import IDENTITY, SkillsRepoDouble, wait_until


def _app(runs_dir: Path) -> SkillOptApp:
    return SkillOptApp(
        runs_dir,
        Path("double"),
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
    )


async def test_palette_reaches_history_from_review_and_has_one_quit(runs_dir):
    app = _app(runs_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        commands = list(app.get_system_commands(app.screen))
        titles = [c.title for c in commands]
        history = [c for c in commands if "hist" in c.title.lower()]
        assert history, titles
        assert all("(Review screen)" not in c.help for c in commands)
        app.call_next(history[0].callback)  # as the palette does, from the app loop
        assert await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        home = [c for c in app.get_system_commands(app.screen) if "quit" in c.title.lower()]
        assert len(home) == 1, [c.title for c in home]


async def test_j_and_k_move_in_the_home_tables(runs_dir):
    app = _app(runs_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, HomeScreen) and len(app.screen.runs) == 3
        )
        table = app.screen.query_one("#runs")
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1


async def test_palette_runs_another_screens_action_there(runs_dir, skills_repo):
    """From Review, "History: Roll back (R)" opens History and asks to roll back the
    newest adoption, as R there would; descriptions name the screen in words. Going back
    to Review returns to the one open instead of stacking another."""
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished", [1])
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        rollback = commands["History: Roll back (R)"]
        assert rollback.help.endswith("on History (opens it)")
        assert "Home: Refresh (g)" in commands and "History: Diff (d)" in commands
        assert not any(t.startswith("Review:") for t in commands)  # its own keys, as keys
        app.call_next(rollback.callback)
        # the dialog is pushed before it composes: wait for its title, not just the screen
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, ConfirmDialog) and app.screen.query("#dialog-title"),
        )
        assert "Roll back this adoption?" in str(app.screen.query_one("#dialog-title").render())
        assert isinstance(app.screen_stack[-2], HistoryScreen)
        await pilot.press("n")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        # and back: from History, a Review action opens Review and runs there
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        app.call_next(commands["Review: All (a)"].callback)
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0,
        )
        assert await wait_until(
            pilot, lambda: app.screen.decisions == {1: "adopted", 2: "approved", 3: "approved"}
        )
        # back to the Review already open (History above it closed), not a second copy
        assert [type(s) for s in app.screen_stack[1:]] == [HomeScreen, ReviewScreen]
