"""One skill compared across two real nights: the scripted TEST DOUBLE night world
(tests/support/sleep_world.py), a night on the first batch of sessions and the next day a
night on a second batch that asks the same tasks again. `skillopt compare` and the Sleep
screen's marks (space on a night's skill row, c) show the skill's val items side by side."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from textual.widgets import DataTable

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.compare import CompareScreen
from skillopt_tui.app.screens.sleep import SleepScreen
from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.sleep_world import DAY, make_world, run_night, write_later_sessions
from tests.support.tui_app import wait_until

NIGHTS = ("sleep-2026-11-30", "sleep-2026-12-01")


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory):
    root = tmp_path_factory.mktemp("nights")
    world = make_world(root)
    first = run_night(world, DAY)
    write_later_sessions(world)
    second = run_night(world, DAY + dt.timedelta(days=1))
    assert (first["night_id"], second["night_id"]) == NIGHTS
    assert first["status"] == second["status"] == "finished"
    folders = [world.state / "nights" / night / "notes-app" for night in NIGHTS]
    return world, folders


def val_ids(folder) -> list[str]:
    """The held-out tasks the night froze for the skill (its tasks.json)."""
    tasks = json.loads((folder.parent / "tasks.json").read_text())
    return sorted(task["id"] for task in tasks["skills"][folder.name]["val"])


def test_skillopt_compare_pairs_one_skills_val_items_across_two_nights(two_nights):
    world, (first, second) = two_nights
    shown = skillopt(world.home, "compare", str(first), str(second))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    # each column says which night it is (both folders are named after the skill)
    assert "against sleep-2026-11-30/notes-app" in lines[0]
    header = next(line for line in lines if line.startswith("item "))
    assert header.split() == ["item", *(f"{night}/notes-app" for night in NIGHTS)]
    # the second night replayed the first one's held-out tasks: every row has two scores
    held_out = [val_ids(folder) for folder in (first, second)]
    assert held_out[0] == held_out[1] and len(held_out[0]) >= 2
    val = lines[lines.index(header) + 1 : lines.index("", lines.index(header))]
    assert [row.split()[0] for row in val] == held_out[0]
    assert all(len(row.split()) == 4 and "—" not in row for row in val)
    later = next(line for line in lines if line.startswith("sleep-2026-12-01/notes-app  2 "))
    assert later.split()[-1] == "1"  # no item moved: the sign test's p is 1


async def test_the_sleep_screen_marks_two_nights_and_compares_them(two_nights, monkeypatch):
    world, folders = two_nights
    monkeypatch.setenv("HOME", str(world.home))
    printed = skillopt(world.home, "compare", *map(str, folders)).stdout
    app = SkillOptApp(world.home / "runs", world.skills, refresh_runs=False, state_dir=world.state)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s")
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, SleepScreen) and app.screen.loaded["nights"] > 0,
            limit=500,
        )
        sleep = app.screen
        table = sleep.query_one("#night-list", DataTable)
        await pilot.press("space")  # the cursor starts on a night's own row: not a run
        assert sleep.marked == []
        for folder in folders:  # the older night first: it is the baseline
            row = next(
                i
                for i, ref in enumerate(sleep.night_refs)
                if ref.kind == "skill" and ref.skill.run_dir == folder
            )
            table.move_cursor(row=row, animate=False)
            await pilot.press("space")
            assert str(table.get_row_at(row)[0]) == "●  notes-app"
        assert sleep.marked == folders
        await pilot.press("c")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded
        )
        assert str(app.screen.query_one("#compare-table").render()) == printed.rstrip("\n")
