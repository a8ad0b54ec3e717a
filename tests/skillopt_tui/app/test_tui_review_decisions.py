"""Review never drops a decision, and says what it will do and what it did: decisions kept
per branch for the session, conflicts marked before adopting, adopt-all feedback, empty
states that say what to do next, and Home following the repository."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.deploy_conflict import conflict_body
from skillopt_tui.app.widgets.hunk_list import HunkList
from tests.support.tui_app import (
    IDENTITY,
    SKILL_V1,
    stage_second_branch,
    wait_until,
)


def _app(runs_dir: Path, skills: Path | None, **kw) -> SkillOptApp:
    kw.setdefault("refresh_runs", False)
    return SkillOptApp(runs_dir, skills, poll_interval=0.05, **kw)


async def _review(pilot, loaded: int = 0) -> ReviewScreen:
    await pilot.press("v")
    assert await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, ReviewScreen) and pilot.app.screen.loaded > loaded,
    )
    return pilot.app.screen


def _marks(review: ReviewScreen) -> list[str]:
    return [item.decision for item in review.state.items]


def _hunk_text(review: ReviewScreen) -> str:
    """What the hunk list shows, as plain text (rendered at 100 columns)."""
    console = Console(width=100, record=True, file=io.StringIO())
    for child in review.query_one(HunkList).children:
        console.print(child.content)
    return console.export_text()


async def test_decisions_survive_branch_switches_and_leaving_review(runs_dir, skills_repo):
    stage_second_branch(SkillsRepo.open(skills_repo, identity=IDENTITY))
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _review(pilot)
        await pilot.press("y", "n")
        assert _marks(review) == ["approved", "rejected", "pending"]
        await pilot.press("right_square_bracket")
        assert await wait_until(pilot, lambda: review.loaded == 2)
        assert review.diff.branch == "staged/demo-second"
        await pilot.press("left_square_bracket")
        assert await wait_until(pilot, lambda: review.loaded == 3)
        assert _marks(review) == ["approved", "rejected", "pending"]
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        review = await _review(pilot)
        assert _marks(review) == ["approved", "rejected", "pending"]
        assert "kept for this session" in str(review.query_one("#review-status").render())


async def test_rejected_hunks_stay_rejected_after_a_partial_adopt(runs_dir, skills_repo):
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _review(pilot)
        await pilot.press("y", "n", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        assert _marks(review) == ["adopted", "rejected", "pending"]
        assert "[n]" in _hunk_text(review)


def _conflict_on_main(skills_repo: Path) -> None:
    """main changes the line hunk 2 of staged/demo-finished inserts after."""
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    edited = SKILL_V1.replace("boiling point of water: 100 C", "boiling point of water: 99.97 C")
    repo.stage("quiz", "hand", edited, subject="s", trailers={"Step": "1"})
    repo.adopt("staged/hand")


async def test_conflicting_hunk_is_marked_and_left_out_of_the_adoption(runs_dir, skills_repo):
    _conflict_on_main(skills_repo)
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _review(pilot)
        assert [h.conflicts for h in review.diff.hunks] == [False, True, False]
        assert "conflicts with main" in _hunk_text(review)
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        body = str(app.screen.body)
        assert "2 of 3 hunks" in body
        assert "Not adopted" in body and "#2" in body and "conflicts with main" in body
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
    repo = SkillsRepo.open(skills_repo)
    assert repo.log("quiz")[0].trailers["Hunks"] == "1,3"
    assert "largest ocean" not in repo.read_skill("quiz")


async def test_adopting_every_hunk_says_the_branch_was_archived(runs_dir, skills_repo):
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _review(pilot)
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        messages = " ".join(n.message for n in app._notifications)
        assert "archived as adopted/demo-finished" in messages
        assert "deployed to" in messages


async def test_empty_repo_says_how_to_stage_and_hides_what_cannot_act(runs_dir, tmp_path):
    path = tmp_path / "skills"
    SkillsRepo.init(path, identity=IDENTITY).add_skill("quiz", SKILL_V1)
    app = _app(runs_dir, path)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _review(pilot)
        assert "skillopt train" in _hunk_text(review)
        shown = {b.binding.action for b in review.active_bindings.values()}
        assert review.check_action("decide", ("approved",)) is False
        assert review.check_action("adopt", ()) is False
        assert "back" in {a.split("(")[0] for a in shown}


async def test_empty_runs_dir_says_how_to_start_a_run(tmp_path):
    app = _app(tmp_path / "no-runs-yet", None)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        label = app.screen.query_one("#runs-empty")
        assert await wait_until(pilot, lambda: "press n" in str(label.render()))
        assert "skillopt train" in str(label.render())


async def test_home_follows_the_skills_repo(runs_dir, skills_repo):
    app = _app(runs_dir, skills_repo, refresh_runs=True)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.overview.skills
        )
        home = app.screen
        assert home.overview.skills[0].staged == 1
        stage_second_branch(SkillsRepo.open(skills_repo, identity=IDENTITY))  # a headless run
        assert await wait_until(pilot, lambda: home.overview.skills[0].staged == 2, limit=250)
        review = await _review(pilot)
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: app.screen is home)
        assert await wait_until(
            pilot, lambda: home.overview.skills[0].last_adoption.endswith("demo-finished")
        )


def test_deploy_conflict_dialog_speaks_tui():
    class Changed:
        target = "/live/SKILL.md"
        difference = "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n"

        def __str__(self) -> str:
            return (
                "deploy target /live/SKILL.md was changed outside skillopt (1 lines differ "
                "from what we last deployed); fold your edit into the skill in the repo, or "
                "pass --force to overwrite it"
            )

    text = str(conflict_body(Changed()))
    assert "--force" not in text and "1 lines" not in text
    assert "1 line differs" in text and "Overwrite (o)" in text and "Cancel (c)" in text
