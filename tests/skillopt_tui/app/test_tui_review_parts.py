"""Split parts and line selections are hunks of their own in Review: judged on main / in
conflict by their own lines, with their own `@@` header; chosen lines look unlike the rest;
line mode's footer lists line-mode keys only; `U` undoes the last adopt (issue 40)."""

from __future__ import annotations

import io

from rich.console import Console

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.hunk_list import HunkList, head_text
from tests.support.tui_app import (
    SKILL_V1,
    open_review,
    split_repo,
    wait_until,
)


def _labels(review: ReviewScreen) -> list[tuple[str, str]]:
    return [(i.label, i.decision) for i in review.state.items]


def _rows(view, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(view.content)
    return console.export_text().splitlines()


async def _adopt(pilot, review: ReviewScreen) -> None:
    loads = review.loaded
    await pilot.press("A")
    assert await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog))
    await pilot.press("y")
    assert await wait_until(pilot, lambda: review.loaded > loads and review.state, limit=300)


async def test_an_adopted_split_part_stays_on_main(runs_dir, tmp_path):
    split_repo(tmp_path / "skills")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        await pilot.press("s", "y", "n", "n")  # #1.1 approved, #1.2 and #2 rejected
        await _adopt(pilot, review)
        assert _labels(review) == [("#1.1", "adopted"), ("#1.2", "rejected"), ("#2", "rejected")]
        status = str(review.query_one("#review-status").render())
        assert "no longer on main" not in status
        assert "on main" in head_text(review.state.items[0]).plain


async def test_a_part_is_judged_by_its_own_lines_not_its_parents(runs_dir, tmp_path):
    repo = split_repo(tmp_path / "skills")
    # another branch changes the line of #1's second block, and is adopted first
    repo.stage(
        "quiz",
        "other-half",
        SKILL_V1.replace("- Use plain text.\n", "- Use plain text only.\n"),
        subject="quiz: other",
        trailers={"Run-Id": "other-half", "Step": "1"},
    )
    repo.adopt("staged/other-half")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        assert review.state.items[0].conflicts  # the whole hunk does clash
        await pilot.press("s")
        first, second = review.state.items[:2]
        assert (first.label, first.conflicts) == ("#1.1", False)
        assert (second.label, second.conflicts) == ("#1.2", True)
        await pilot.press("y", "n", "n")
        await _adopt(pilot, review)
    text = SkillsRepo.open(tmp_path / "skills").read_skill("quiz")
    assert "Answer exactly the question asked." in text and "- Use plain text only.\n" in text


async def test_split_parts_carry_their_own_header(runs_dir, tmp_path):
    split_repo(tmp_path / "skills")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        assert "@@ -1,10 +1,10 @@" in head_text(review.state.items[0]).plain
        await pilot.press("s")
        heads = [head_text(i).plain for i in review.state.items[:2]]
        assert "@@ -1,6 +1,6 @@" in heads[0] and "@@ -4,7 +4,7 @@" in heads[1]
        assert "+1 -1" in heads[0] and "+1 -1" in heads[1]


async def test_chosen_lines_look_unlike_lines_left_out(runs_dir, tmp_path):
    split_repo(tmp_path / "skills")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        await pilot.press("j", "space", "j", "j", "space", "escape")  # #2: only line 3
        assert _labels(review)[1] == ("#2", "partial")
        rows = _rows(review.query_one(HunkList).views[1])
        chosen = next(r for r in rows if "Cite a source" in r)
        left_out = next(r for r in rows if "Do not guess." in r)
        assert chosen.lstrip().startswith("✓") and not left_out.lstrip().startswith("✓")


def _footer_actions(review: ReviewScreen) -> set[str]:
    return {
        b.binding.action for b in review.active_bindings.values() if b.binding.show and b.enabled
    }


async def test_line_mode_footer_lists_line_mode_keys_only(runs_dir, tmp_path):
    split_repo(tmp_path / "skills")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        assert {"decide('approved')", "split", "adopt"} <= _footer_actions(review)
        await pilot.press("space")
        shown = _footer_actions(review)
        assert {"line_choose", "line_range", "lines_done"} <= shown
        assert not shown & {"decide('approved')", "decide('rejected')", "split", "adopt"}
        await pilot.press("space")  # chooses the line under the cursor, stays in line mode
        assert review.state.line_cursor == 1 and review.state.item.chosen == {1}
        await pilot.press("escape")
        assert review.state.line_cursor is None and isinstance(app.screen, ReviewScreen)
        assert "adopt" in _footer_actions(review)


async def test_undo_of_the_last_adopt_rolls_back_exactly_it(runs_dir, tmp_path):
    repo = split_repo(tmp_path / "skills")
    before = repo.git.run("rev-parse", "main^{tree}").strip()
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        assert "undo_adopt" not in _footer_actions(review)
        await pilot.press("s", "y", "n", "y")  # #1.1 and #2
        await _adopt(pilot, review)
        adopted = SkillsRepo.open(tmp_path / "skills").log("quiz")[0]
        assert "undo_adopt" in _footer_actions(review)
        loads = review.loaded
        await pilot.press("U")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert adopted.sha[:7] in str(app.screen.body)
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > loads and review.state, limit=300)
        assert _labels(review)[0] == ("#1.1", "pending")  # reverted: to review again
    repo = SkillsRepo.open(tmp_path / "skills")
    assert repo.git.run("rev-parse", "main^{tree}").strip() == before
    assert repo.log("quiz")[0].trailers["Reverts"] == adopted.sha
