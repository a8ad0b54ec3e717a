"""Small key and display fixes: Review's ↑/↓ belong to the focused list, modal dialogs
cover the footer below them, early-rejected gates and baseline rollouts read plainly, the
palette's help is human text."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Footer, OptionList

from core.run.events import GateDecided, RolloutFinished
from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.gate_log import gate_scores
from skillopt_tui.app.widgets.hunk_list import HunkList
from skillopt_tui.app.widgets.rollouts_table import _cells
from tests.support.tui_app import IDENTITY, SkillsRepoDouble, stage_second_branch, wait_until


def _footer_text(screen) -> str:
    return " ".join(str(w.render()) for w in screen.query("FooterKey"))


async def test_review_arrows_move_in_the_focused_list(runs_dir, skills_repo):
    stage_second_branch(SkillsRepo.open(skills_repo, identity=IDENTITY))
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        review = app.screen
        # Focus lands on the hunk list once the screen has mounted it (late when loaded).
        assert await wait_until(pilot, lambda: review.focused is review.query_one(HunkList))
        await pilot.press("down", "down")
        assert review.current == 2
        await pilot.press("up", "k")
        assert review.current == 0
        branches = review.query_one("#branches", OptionList)
        branches.focus()
        await pilot.press("down")
        assert branches.highlighted == 1 and review.current == 0  # the list moved, not hunks
        await pilot.press("enter")  # opens the highlighted branch
        assert await wait_until(
            pilot,
            lambda: review.diff is not None and review.diff.branch == "staged/demo-second",
            limit=250,
        )


async def test_confirm_dialog_shows_its_own_keys_not_the_screens(runs_dir):
    app = SkillOptApp(
        runs_dir,
        Path("double"),
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        # the footer fills in after the screen loads: wait for it, not a fixed pause
        assert await wait_until(pilot, lambda: "Approve" in _footer_text(app.screen))
        await pilot.press("a", "A")
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, ConfirmDialog) and "Yes" in _footer_text(app.screen),
        )
        footer = _footer_text(app.screen)
        assert "Yes" in footer and "No" in footer and "Approve" not in footer
        # the dialog's footer is the bottom line, over the review's
        assert app.screen.query_one(Footer).region.y == 23
        await pilot.press("n")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))


async def test_palette_help_is_human_text(runs_dir):
    app = SkillOptApp(
        runs_dir,
        Path("double"),
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps["Approve (y)"] == "Approve the current hunk and move to the next"
        assert helps["Back (esc)"] == "Leave Review (its decisions are kept for the session)"
        assert not any("decide(" in h or "Screen:" in h for h in helps.values())


def test_early_rejected_gate_shows_its_bound():
    def gate(score, scored):
        return GateDecided(
            step=2,
            accepted=False,
            best_before=0.33,
            candidate_score=score,
            items_scored=scored,
            items_total=5,
            rollouts_saved=0,
        )

    assert gate_scores(gate(None, 2)) == "≤0.33 (early)"  # an older run: no bound recorded
    bounded = gate(None, 2)
    bounded.at_most = 0.25
    assert gate_scores(bounded) == "≤0.25 (early)"
    assert gate_scores(gate(None, 0)) == "0.33 (invalid)"
    assert gate_scores(gate(0.2, 5)) == "0.33→0.20"


def test_baseline_rollouts_have_no_step_of_their_own():
    def rollout(phase, step):
        return RolloutFinished(
            phase=phase,
            step=step,
            split="val",
            skill_hash="h",
            item_id="i",
            task_type="qa",
            hard=1.0,
            soft=1.0,
            latency_s=0.1,
        )

    assert _cells(rollout("baseline", -1))[:2] == ("—", "baseline")
    assert _cells(rollout("gate", 3))[0] == "3"
