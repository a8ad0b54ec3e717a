"""Review under 80 columns: one pane (the hunks), the branches and evidence behind `i`,
and `A Adopt` still in the footer."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.review import ReviewScreen
from tests.support.tui_app import RUNS, SkillsRepoDouble, wait_until


def _app() -> SkillOptApp:
    return SkillOptApp(
        RUNS,
        RUNS / "no-such-repo",
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
    )


def _footer(screen) -> list[str]:
    return [f"{k.key_display} {k.description}" for k in screen.query(FooterKey) if k.display]


async def _review(pilot) -> ReviewScreen:
    assert await wait_until(pilot, lambda: len(getattr(pilot.app.screen, "runs", [])) == 3)
    await pilot.press("v")
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, ReviewScreen) and pilot.app.screen.loaded > 0
    )
    await pilot.pause(0.2)
    return pilot.app.screen


@pytest.mark.parametrize(
    "size", [(45, 40), (60, 18), (79, 24)], ids=["45x40 (a phone)", "60x18", "79x24"]
)
async def test_narrow_review_has_one_pane_and_keeps_adopt_in_the_footer(size):
    app = _app()
    async with app.run_test(size=size) as pilot:
        review = await _review(pilot)
        side, main = review.query_one("#review-side"), review.query_one("#review-main")
        assert side.region.width == 0 and main.region.width == size[0]
        assert "A Adopt" in _footer(review)
        assert "i evidence" in str(review.query_one("#review-status").render())
        await pilot.press("i")
        await pilot.pause(0.1)
        assert side.region.width == size[0] and main.region.width == 0
        await pilot.press("i")
        await pilot.pause(0.1)
        assert side.region.width == 0 and main.region.width == size[0]


async def test_wide_review_keeps_both_panes():
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        review = await _review(pilot)
        assert review.query_one("#review-side").region.width > 0
        assert review.query_one("#review-main").region.width > 0
        assert "i evidence" not in str(review.query_one("#review-status").render())
        assert "A Adopt" in _footer(review)
