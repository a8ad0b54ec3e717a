"""What `git add -p` / lazygit users look for in Review: split a hunk (s), choose lines
(space, v), undo (u), next undecided (J/K), search (/), preview (p); the adoption equals
`skillopt skills adopt --lines` made through the API on an identical repo."""

from __future__ import annotations

import io

from rich.console import Console

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.hunk_list import HunkList
from tests.support.tui_app import (
    IDENTITY,
    SKILL_V1,
    open_review,
    split_repo,
    wait_until,
)


def _plain(view) -> str:
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(view.content)
    return " ".join(console.export_text().split())  # wrapping aside


def _labels(review: ReviewScreen) -> list[tuple[str, str]]:
    return [(i.label, i.decision) for i in review.state.items]


async def test_split_choose_lines_undo_and_adopt_equals_the_cli(runs_dir, tmp_path):
    split_repo(tmp_path / "skills")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await open_review(pilot)
        assert _labels(review) == [("#1", "pending"), ("#2", "pending")]
        status = str(review.query_one("#review-status").render())
        assert "hunk 1/2" in status
        await pilot.press("s")
        assert _labels(review) == [("#1.1", "pending"), ("#1.2", "pending"), ("#2", "pending")]
        await pilot.press("y", "n")
        assert "hunk 3/3" in str(review.query_one("#review-status").render())
        await pilot.press("u")  # undo the rejection of #1.2: back on it, pending
        assert _labels(review)[1] == ("#1.2", "pending") and review.current == 1
        await pilot.press("n")
        # hunk 2: choose only its 3rd changed line ("+- Cite a source.")
        await pilot.press("space", "j", "j", "space", "escape")
        assert _labels(review)[2] == ("#2", "partial")
        assert review.state.cli_args() == "--lines 1:1-2 --lines 2:3"
        await pilot.press("A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        body = str(app.screen.body)
        assert "Not adopted" in body and "#1.2 (rejected)" in body
        assert "skillopt skills adopt staged/demo-split --lines 1:1-2 --lines 2:3" in body
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)

    expected = split_repo(tmp_path / "expected")
    expected.adopt("staged/demo-split", lines={1: {1, 2}, 2: {3}})
    repo = SkillsRepo.open(tmp_path / "skills")
    assert repo.read_skill("quiz") == expected.read_skill("quiz")
    got, want = repo.log("quiz")[0].trailers, expected.log("quiz")[0].trailers
    assert (got["Hunks"], got["Lines"]) == (want["Hunks"], want["Lines"]) == ("1,2", "1:1-2 2:3")
    text = repo.read_skill("quiz")
    assert "Answer exactly" in text and "no markdown" not in text
    assert "- Do not guess.\n- Cite a source.\n" in text


async def test_range_selection_with_v(runs_dir, tmp_path):
    split_repo(tmp_path / "skills")
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await open_review(pilot)
        await pilot.press("j", "v", "j", "v")  # hunk 2: lines 1-2 chosen as a range
        assert review.state.items[1].chosen == {1, 2}
        assert review.state.selection() == ([], {2: frozenset({1, 2})})


async def test_next_undecided_search_and_preview(runs_dir, tmp_path, skills_repo):
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await open_review(pilot)
        await pilot.press("y", "k")  # hunk 1 approved, back on it
        await pilot.press("J")
        assert review.current == 1
        await pilot.press("n", "K")  # nothing undecided before: stays, and says so
        assert review.current == 2
        assert any("No undecided" in n.message for n in app._notifications)
        await pilot.press("slash")
        await pilot.press(*"ocean", "enter")
        assert review.current == 1  # hunk 2 adds "largest ocean"
        await pilot.press("escape")  # closes the search box, stays in Review
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("p")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        body = str(app.screen.body)
        assert "+Answer exactly the question asked." in body and "largest ocean" not in body
        await pilot.press("c")
        assert await wait_until(pilot, lambda: app.screen is review)
    assert SkillsRepo.open(skills_repo).read_skill("quiz") == SKILL_V1  # preview commits nothing


async def test_a_very_long_line_is_cut_with_a_marker_and_w_shows_it(runs_dir, tmp_path):
    repo = SkillsRepo.init(tmp_path / "skills", identity=IDENTITY)
    repo.add_skill("quiz", SKILL_V1)
    long_rule = "- " + "always check the units " * 66 + "end\n"  # ~1,590 characters
    repo.stage("quiz", "long", SKILL_V1 + long_rule, subject="s", trailers={"Step": "1"})
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await open_review(pilot)
        view = review.query_one(HunkList).views[0]
        assert view.size.height < 20  # not 60 rows of one line
        assert "chars (w: show all)" in _plain(view)
        await pilot.press("w")
        await pilot.pause()
        assert "chars (w: show all)" not in _plain(view) and "end" in _plain(view)
