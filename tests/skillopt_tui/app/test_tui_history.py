"""History: the diff pane follows the cursor (so R acts on the commit shown), the rollback
dialog shows what it will revert, and one hunk of an adoption can be rolled back."""

from __future__ import annotations

from pathlib import Path

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.diff_view import DiffView
from tests.support.tui_app import IDENTITY, SKILL_V1, SKILL_V2, stage_second_branch, wait_until


def _diff_text(screen) -> str:
    return screen.query_one(DiffView).text()


async def _history(pilot) -> HistoryScreen:
    await pilot.press("h")
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.loaded > 0
    )
    return pilot.app.screen


def _two_adoptions(skills_repo: Path) -> SkillsRepo:
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    stage_second_branch(repo)
    repo.adopt("staged/demo-second")  # older: "- No emoji."
    repo.adopt("staged/demo-finished", [1, 3])  # newest: row 0
    return repo


async def test_diff_follows_the_cursor_and_rollback_targets_the_shown_commit(runs_dir, skills_repo):
    _two_adoptions(skills_repo)
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        history = await _history(pilot)
        assert await wait_until(pilot, lambda: "Answer exactly" in _diff_text(history))
        await pilot.press("down")  # no `d`: the pane follows
        assert await wait_until(pilot, lambda: "No emoji" in _diff_text(history))
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        body = str(app.screen.body)
        assert "+- No emoji." in body and "Answer exactly" not in body
        await pilot.press("y")
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
    text = SkillsRepo.open(skills_repo).read_skill("quiz")
    assert "No emoji" not in text and "Answer exactly" in text


async def test_roll_back_one_hunk_from_history(runs_dir, skills_repo):
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished")
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        history = await _history(pilot)
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Only hunk 2 (2)" in [str(b.label) for b in app.screen.query("Button")]
        await pilot.press("2")
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
    text = SkillsRepo.open(skills_repo).read_skill("quiz")
    assert text == SKILL_V2.replace("- largest ocean: Pacific\n", "")
    assert text != SKILL_V1


async def test_a_diff_load_does_not_cancel_the_rollback_question(runs_dir, skills_repo):
    """R, then the cursor's diff load in the same tick (as after a log refresh): the
    rollback question still comes (they once shared an exclusive worker group)."""
    SkillsRepo.open(skills_repo, identity=IDENTITY).adopt("staged/demo-finished")
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        history = await _history(pilot)
        history.action_rollback()
        history.action_diff()
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))


LONG_RULE = "- When the question names a country, " + "answer with its official name " * 12
LONG_SUBJECT = "quiz: make the answers follow the official names the reference list uses"


async def test_long_subjects_and_lines_end_in_an_ellipsis_and_w_wraps_them(runs_dir, skills_repo):
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    repo.stage(
        "quiz",
        "demo-long",
        SKILL_V1 + LONG_RULE + "\n",
        subject=LONG_SUBJECT,
        trailers={"Run-Id": "demo-long", "Step": "0"},
        body="1. append: official names",
    )
    repo.adopt("staged/demo-long")
    full = next(iter(repo.log("quiz"))).subject
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        history = await _history(pilot)
        table = history.query_one("#log")
        subject = str(table.get_row_at(0)[3])
        assert subject.endswith("…") and full.startswith(subject[:-1]) and len(subject) < len(full)
        assert await wait_until(pilot, lambda: "When the question" in _diff_text(history))
        shown = _diff_text(history)
        # the whole message is there, wrapped; the long diff line ends in … at the pane edge
        assert full in shown and LONG_SUBJECT in " ".join(shown.split())
        long_line = next(line for line in shown.splitlines() if "+- When the question" in line)
        assert long_line.rstrip().endswith("…")
        await pilot.press("w")
        wrapped = _diff_text(history)
        assert wrapped.replace("\n", "").count("answer with its official name") == 12


async def test_a_hunk_a_later_commit_undid_is_not_offered(runs_dir, skills_repo):
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    repo.adopt("staged/demo-finished")  # hunks 1-3
    repo.stage(
        "quiz",
        "no-ocean",
        SKILL_V2.replace("- largest ocean: Pacific\n", ""),
        subject="quiz: drop the ocean",
        trailers={"Run-Id": "no-ocean"},
    )
    repo.adopt("staged/no-ocean")  # undoes hunk 2 of the first adoption, not by rollback
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        history = await _history(pilot)
        await pilot.press("down")  # the first adoption
        assert await wait_until(pilot, lambda: "largest ocean" in _diff_text(history))
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        labels = [str(b.label) for b in app.screen.query("Button")]
        assert "Only hunk 1 (1)" in labels and "Only hunk 3 (3)" in labels
        assert not any("hunk 2" in label for label in labels)
        body = str(app.screen.body)
        assert "Hunk 2 is no longer on main" in body and "+- largest ocean" not in body
        await pilot.press("y")
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
    assert SkillsRepo.open(skills_repo).read_skill("quiz") == SKILL_V1
