"""No footer cuts a key mid-word ("s Slee" on Home and "space Line" on Review at 60
columns): a key is shown whole or left out (`?` and the palette list every key)."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets._footer import FooterKey

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from tests.support.tui_app import RUNS, SkillsRepoDouble, wait_until

SIZES = [(60, 18), (80, 24), (120, 40)]


def _app(**kw) -> SkillOptApp:
    return SkillOptApp(
        RUNS,
        RUNS / "no-such-repo",
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
        **kw,
    )


def _cut_keys(screen) -> list[str]:
    footer = screen.query_one("Footer")
    keys = [k for k in screen.query(FooterKey) if k.display]
    palette = [k.region.x for k in keys if k.has_class("-command-palette")]
    limit = min(palette or [footer.region.right])
    return [
        f"{k.key_display} {k.description}"
        for k in keys
        # its text: the region less the blank cell after it, which the palette may cover
        if not k.has_class("-command-palette")
        and (not k.region.width or k.region.right - 1 > limit)
    ]


async def _settled(pilot) -> None:
    """Once every key the footer shows is laid out (a loaded machine lays it out late; a
    key truly cut stays unlaid and the caller's check names it), then a pause for the
    last layout pass."""

    def laid_out() -> bool:
        keys = [k for k in pilot.app.screen.query(FooterKey) if k.display]
        return bool(keys) and all(k.region.width for k in keys)

    await wait_until(pilot, laid_out)
    await pilot.pause(0.3)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_no_footer_key_is_cut(size):
    app = _app()
    async with app.run_test(size=size) as pilot:
        assert await wait_until(pilot, lambda: len(getattr(app.screen, "runs", [])) == 3)
        await _settled(pilot)
        shown = {"home": _cut_keys(app.screen)}
        assert (
            "s Sleep"
            in [
                f"{k.key_display} {k.description}" for k in app.screen.query(FooterKey) if k.display
            ]
            or size[0] < 80
        )
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        await _settled(pilot)
        shown["review"] = _cut_keys(app.screen)
        await pilot.press("escape", "h")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded > 0
        )
        await _settled(pilot)
        shown["history"] = _cut_keys(app.screen)
        await pilot.press("escape")
        app.open_run(RUNS / "demo-finished")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        await _settled(pilot)
        shown["run"] = _cut_keys(app.screen)
    assert shown == {"home": [], "review": [], "history": [], "run": []}


class _TwoKeys(App):
    """A screen with two footer keys, the second shown only while `armed`."""

    BINDINGS = [("a", "first", "First"), ("b", "second", "Second")]
    armed = True

    def compose(self):
        yield FittingFooter(compact=True, show_command_palette=False)

    def check_action(self, action: str, parameters) -> bool | None:
        return self.armed if action == "second" else True


def _footer_keys(app: App) -> list[FooterKey]:
    return list(app.screen.query(FooterKey))


async def test_the_footer_is_rebuilt_only_when_its_keys_change():
    """The screen signals a bindings change on every focus move and refresh; a footer
    that rebuilt all its keys each time spent a tenth of the app's CPU."""
    app = _TwoKeys()
    async with app.run_test(size=(80, 10)) as pilot:
        assert await wait_until(pilot, lambda: len(_footer_keys(app)) == 2)
        before = _footer_keys(app)
        for _ in range(3):
            app.screen.refresh_bindings()  # nothing the footer shows has changed
            await pilot.pause(0.05)
        assert _footer_keys(app) == before  # the same key widgets, not rebuilt ones
        assert all(k.is_attached for k in before)
        app.armed = False
        app.screen.refresh_bindings()
        assert await wait_until(pilot, lambda: [k.key for k in _footer_keys(app)] == ["a"])
