"""The Sleep screen shows every recorded project, not only the first: `p` moves to the
next one, and the header, the sessions a night would read, the nights and the mined-task
archive are that project's. Real Sleep state: transcripts in the recorded formats, a real
skills repository, a real night per project on the scripted TEST DOUBLE
(tests/support/sleep_world.py). On the old screen there was no `p` and the second
project's night and sessions were never shown."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from core.config import load_config
from core.file_lock import FileLock
from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.sleep import SleepScreen
from sleep.harvest.run import HarvestOptions
from sleep.night.held_tasks import transcript_harvester
from sleep.night.projects import night_label
from sleep.night.run import Night
from sleep.state.settings import save_settings
from tests.support.sleep_world import DAY, SKILL_TEXT, SleepWorld, make_world, run_night
from tests.support.tui_app import wait_until

ROOT = Path(tempfile.gettempdir()) / "skillopt-sleep-projects-world"


def two_projects(root: Path) -> tuple[SleepWorld, Path]:
    """The Sleep world, with its "other" project (one session there) recorded second and
    its own skill; a night run for each project."""
    world = make_world(root)
    other = world.home / "src" / "other"
    other.mkdir(parents=True)
    (other / "CLAUDE.md").write_text(SKILL_TEXT)
    SkillsRepo.open(world.skills).add_skill("other", SKILL_TEXT, deploy_to=str(other / "CLAUDE.md"))
    settings = world.settings
    recorded = [*settings.projects, str(other)]
    save_settings(world.state, settings.model_copy(update={"projects": recorded}))
    run_night(world)
    s = world.settings
    night = Night(
        state_dir=world.state,
        repo=SkillsRepo.open(world.skills),
        config=load_config(world.config, []),
        harvest=transcript_harvester(
            HarvestOptions(
                state_dir=world.state, project=other,
                claude_home=s.claude_home, codex_home=s.codex_home,
            )
        ),
        project=other,
        today=DAY,
        label=night_label(other, recorded),
    )  # fmt: skip
    asyncio.run(night.run())
    return world, other


def _app(world: SleepWorld) -> SkillOptApp:
    app = SkillOptApp(
        world.home / "runs", world.skills, refresh_runs=False, poll_interval=0.05,
        state_dir=world.state,
    )  # fmt: skip
    app.animation_level = "none"
    return app


def _loaded(pilot, at_least: int = 1) -> bool:
    screen = pilot.app.screen
    return isinstance(screen, SleepScreen) and all(
        screen.loaded[k] >= at_least for k in ("preview", "nights", "tasks")
    )


def _column(screen, table_id: str, col: int = 0) -> list[str]:
    table = screen.query_one(f"#{table_id}", DataTable)
    return [str(table.get_row_at(i)[col]).strip() for i in range(table.row_count)]


def _header(screen) -> str:
    return str(screen.query_one("#sleep-header", Static).render())


@pytest.fixture
def projects_world(tmp_path) -> SleepWorld:
    return two_projects(tmp_path)[0]


async def test_p_shows_each_recorded_project_with_its_sessions_nights_and_tasks(
    projects_world, monkeypatch
):
    world = projects_world
    monkeypatch.setenv("HOME", str(world.home))
    app = _app(world)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("s")
        assert await wait_until(pilot, lambda: _loaded(pilot), limit=500)
        screen = pilot.app.screen
        assert "~/src/notes-app (1 of 2 projects, p: next)" in _header(screen)
        nights = _column(screen, "night-list")
        assert nights[:2] == ["sleep-2026-11-30", "notes-app"] and "other" not in nights
        await pilot.press("5", "t")  # the archive: the first project's tasks only
        assert await wait_until(pilot, lambda: screen.loaded["tasks"] >= 2, limit=500)
        assert set(_column(screen, "mined-list", 1)) == {"notes-app"}  # the skill column

        await pilot.press("p")
        assert await wait_until(
            pilot, lambda: _loaded(pilot, 2) and screen.loaded["tasks"] >= 3, limit=500
        )
        assert "~/src/other (2 of 2 projects, p: next)" in _header(screen)
        assert _column(screen, "night-list")[:2] == ["sleep-2026-11-30-other", "other"]
        assert set(_column(screen, "mined-list", 1)) == {"other"}
        assert any("other tests" in t for t in _column(screen, "mined-list", 3))
        await pilot.press("1", "a")  # the whole history of this project: its one session
        assert await wait_until(pilot, lambda: screen.loaded["preview"] >= 3, limit=500)
        await pilot.press("2")
        assert len(_column(screen, "session-list")) == 1

        await pilot.press("p")  # round to the first again
        assert await wait_until(pilot, lambda: screen.loaded["nights"] >= 3, limit=500)
        assert "(1 of 2 projects" in _header(screen)


async def test_one_project_has_no_p_and_no_project_count(tmp_path, monkeypatch):
    world = make_world(tmp_path)
    monkeypatch.setenv("HOME", str(world.home))
    app = _app(world)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("s")
        assert await wait_until(pilot, lambda: _loaded(pilot), limit=500)
        screen = pilot.app.screen
        assert "projects" not in _header(screen)
        titles = {c.title for c in app.get_system_commands(screen)}
        assert "Project (p)" not in titles


# -- a snapshot at a fixed path (task ids depend on the project's path) -------------------


@pytest.fixture(scope="module")
def fixed_world():
    lock = FileLock(ROOT.with_suffix(".lock"))
    assert lock.acquire(timeout=300), "another test process holds the snapshot world"
    try:
        shutil.rmtree(ROOT, ignore_errors=True)
        yield two_projects(ROOT)[0]
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
        lock.release()


def test_snapshot_the_second_project(snap_compare, fixed_world, monkeypatch):
    monkeypatch.setenv("HOME", str(fixed_world.home))
    monkeypatch.chdir(fixed_world.project)

    async def second_project(pilot) -> None:
        await pilot.press("s")
        assert await wait_until(pilot, lambda: _loaded(pilot), limit=500)
        await pilot.press("p")
        assert await wait_until(pilot, lambda: _loaded(pilot, 2), limit=500)
        pilot.app.clear_notifications()
        await pilot.press("down")
        await pilot.pause(0.1)

    assert snap_compare(_app(fixed_world), terminal_size=(80, 24), run_before=second_project)
