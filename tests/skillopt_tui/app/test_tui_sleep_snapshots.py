"""Snapshots of the Sleep screen's views at 80×24 (and the nights at 120×40), on a real
night run on the scripted TEST DOUBLE. Task ids (and so splits and scores) depend on the
project's path, so the world is built at one fixed path, under a lock against another
test process on this machine. Regenerate after a deliberate layout change with
`pytest --snapshot-update tests/skillopt_tui/app/test_tui_sleep_snapshots.py` and look at
the SVGs before committing them."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from core.file_lock import FileLock
from skillopt_tui.app.app import SkillOptApp
from tests.support.sleep_world import make_world, run_night
from tests.support.tui_app import wait_until

ROOT = Path(tempfile.gettempdir()) / "skillopt-sleep-snapshot-world"


@pytest.fixture(scope="module")
def world():
    lock = FileLock(ROOT.with_suffix(".lock"))
    assert lock.acquire(timeout=300), "another test process holds the snapshot world"
    try:
        shutil.rmtree(ROOT, ignore_errors=True)
        built = make_world(ROOT)
        run_night(built)
        yield built
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
        lock.release()


@pytest.fixture
def app(world, monkeypatch) -> SkillOptApp:
    monkeypatch.setenv("HOME", str(world.home))  # paths show as ~/…
    monkeypatch.chdir(world.project)
    app = SkillOptApp(
        world.home / "runs",
        world.skills,
        refresh_runs=False,
        poll_interval=0.05,
        state_dir=world.state,
    )
    app.animation_level = "none"
    return app


def _before(*keys: str, everything: bool = False):
    async def run_before(pilot) -> None:
        await pilot.press("s")
        assert await wait_until(
            pilot,
            lambda: (
                getattr(pilot.app.screen, "loaded", {}).get("preview", 0) > 0
                and pilot.app.screen.loaded["nights"] > 0
                and pilot.app.screen.loaded["tasks"] > 0
            ),
            limit=500,
        )
        screen = pilot.app.screen
        if everything:
            await pilot.press("1", "a")
            assert await wait_until(pilot, lambda: screen.loaded["preview"] > 1, limit=500)
            pilot.app.clear_notifications()
        await pilot.press(*keys)
        await pilot.pause(0.1)

    return run_before


def test_sleep_nights(snap_compare, app):
    assert snap_compare(app, terminal_size=(80, 24), run_before=_before("down"))


def test_sleep_nights_wide(snap_compare, app):
    assert snap_compare(app, terminal_size=(120, 40), run_before=_before("down", "down"))


def test_sleep_nights_narrow(snap_compare, app):
    """60×18: a branch's name keeps its tail (…-notes-app), not its start."""
    assert snap_compare(app, terminal_size=(60, 18), run_before=_before("down", "down"))


def test_sleep_sources(snap_compare, app):
    assert snap_compare(app, terminal_size=(80, 24), run_before=_before("1", everything=True))


def test_sleep_sessions(snap_compare, app):
    assert snap_compare(app, terminal_size=(80, 24), run_before=_before("2", everything=True))


def test_sleep_redactions(snap_compare, app):
    assert snap_compare(app, terminal_size=(80, 24), run_before=_before("3", everything=True))


def test_sleep_mined_tasks(snap_compare, app):
    assert snap_compare(app, terminal_size=(80, 24), run_before=_before("5"))


def test_sleep_not_set_up(snap_compare, world, monkeypatch):
    bare = ROOT / "bare"  # a fixed path too: the export's ids hash what is drawn
    bare.mkdir()
    monkeypatch.setenv("HOME", str(bare))
    monkeypatch.chdir(bare)
    app = SkillOptApp(bare / "runs", None, refresh_runs=False, state_dir=bare / "state")
    app.animation_level = "none"
    assert snap_compare(app, terminal_size=(80, 24), run_before=_before())
