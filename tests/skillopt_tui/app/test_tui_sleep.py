"""Pilot tests of the Sleep screen on real Sleep state: transcript homes in the recorded
formats, a real skills repository, and nights really run on the scripted TEST DOUBLE
(tests/support/sleep_world.py) — in-process, or as `skillopt sleep run` started by `r`."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from textual.widgets import DataTable, Footer, Static

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.screens.sleep import SleepScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from sleep.mine.split import task_split
from tests.support.sleep_world import SECRET_PROMPT, make_world, run_night
from tests.support.tui_app import wait_until

REPO = Path(__file__).resolve().parents[3]
SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return make_world(tmp_path)


@pytest.fixture
def night(world) -> dict:
    """One night already run (in this process, on the test double)."""
    return run_night(world)


def _app(world, tmp_path) -> SkillOptApp:
    return SkillOptApp(
        tmp_path / "runs",
        world.skills,
        refresh_runs=False,
        poll_interval=0.05,
        state_dir=world.state,
    )


async def _open_sleep(pilot) -> SleepScreen:
    await pilot.press("s")
    assert await wait_until(
        pilot,
        lambda: (
            isinstance(pilot.app.screen, SleepScreen)
            and pilot.app.screen.loaded["preview"] > 0
            and pilot.app.screen.loaded["nights"] > 0
        ),
        limit=500,
    )
    return pilot.app.screen


def _cells(screen, table_id: str) -> list[list[str]]:
    table = screen.query_one(f"#{table_id}", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _names(cell: str, branch: str) -> bool:
    """A ↳ row names `branch`, whole or (narrow, beside the scores) cut with … before the
    tail that tells branches apart."""
    shown = cell.strip().removeprefix("↳ ")
    return shown == branch or (shown.startswith("…") and branch.endswith(shown[1:]))


def _screen_text(screen) -> str:
    texts = [str(w.render()) for w in screen.query(Static)]
    for table in screen.query(DataTable):
        texts += [" ".join(map(str, table.get_row_at(i))) for i in range(table.row_count)]
    return "\n".join(texts)


async def test_sources_sessions_and_redactions_from_a_preview_that_moves_no_cursor(
    world, night, tmp_path
):
    state_file = world.state / "harvest-state.json"
    cursors = state_file.read_bytes()
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        # after the night only the automation session is new (never mined, kept apart)
        await pilot.press("2")
        assert [row[0] for row in _cells(screen, "session-list")] == ["auto"]
        await pilot.press("a")  # the whole history
        assert await wait_until(pilot, lambda: screen.loaded["preview"] > 1, limit=500)
        sessions = _cells(screen, "session-list")
        assert len(sessions) == 10  # 8 typed + 1 automation of the project + 1 Codex
        assert sum(1 for row in sessions if row[0] == "auto") == 1
        assert {row[1] for row in sessions} == {"claude", "codex"}
        tasks = _cells(screen, "session-tasks")  # the first session's four prompts
        assert len(tasks) == 4 and "aborted" in tasks[2][1]  # unanswered: aborted
        assert "[REDACTED:aws_access_key_id]" in tasks[3][1]

        await pilot.press("1")
        roots = {row[0]: row for row in _cells(screen, "roots")}
        # found, files, sub-agent, sessions, skipped
        assert roots["claude"][2:] == ["yes", "11", "1", "9", "1"]
        assert roots["codex"][2:] == ["yes", "1", "0", "1", "0"]
        [skipped] = _cells(screen, "skipped")
        assert skipped[0].endswith("0063.jsonl") and "line" in skipped[1]
        summary = str(screen.query_one("#sources-summary", Static).render())
        assert "other project 2" in summary and "(1 automation)" in summary

        await pilot.press("3")
        [redaction] = _cells(screen, "redaction-list")
        assert redaction[0] == "aws_access_key_id" and redaction[1] == "…(20 chars)"
        detail = str(screen.query_one("#redaction-detail", Static).render())
        assert SECRET_PROMPT.replace(SECRET, "[REDACTED:aws_access_key_id]") in detail
        assert SECRET not in _screen_text(screen)
    assert state_file.read_bytes() == cursors  # the preview moved no cursor


async def test_sources_list_the_other_agents_stores_with_files_and_sessions(world, tmp_path):
    """pi and OpenCode stores (the real CLIs' fixtures) found in the home show beside
    Claude and Codex; their sessions are of another project, so none is delivered here."""
    from tests.sleep.more_agents import home_with

    home_with(tmp_path, "pi", "opencode")  # the world's HOME is tmp_path / "home"
    app = _app(world, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await _open_sleep(pilot)
        await pilot.press("1")
        roots = {row[0]: row for row in _cells(screen, "roots")}
        assert roots["pi"][2:] == ["yes", "2", "0", "0", "0"]
        assert roots["opencode"][2:] == ["yes", "4", "1", "0", "0"]  # 4 rows, 1 sub-agent
        assert roots["copilot"][2] == "no" and roots["cursor"][2] == "no"
        summary = str(screen.query_one("#sources-summary", Static).render())
        assert "other project" in summary


async def test_nights_open_the_run_and_review_the_staged_branch(world, night, tmp_path):
    result = night
    staged = result["skills"]["notes-app"]["staged"]
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        rows = _cells(screen, "night-list")
        assert [r[0].strip() for r in rows[:2]] == ["sleep-2026-11-30", "notes-app"]
        assert _names(rows[2][0], staged)
        o = result["skills"]["notes-app"]
        mined = o["train"] + o["val"] + o["test"]
        assert rows[1][1:] == [
            "finished",
            str(mined),
            str(mined),  # every task was replayed (train and val)
            f"{o['baseline_val']:.2f} → {o['best_val']:.2f}",
        ]
        await pilot.press("down", "enter")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        assert app.screen.run_dir == world.state / "nights" / "sleep-2026-11-30" / "notes-app"
        assert app.screen.status.status == "finished"
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, SleepScreen), limit=250)
        await pilot.press("down", "enter")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        assert app.screen.diff.branch == staged


async def test_mined_tasks_of_the_night_and_of_the_archive(world, night, tmp_path):
    frozen = json.loads((world.state / "nights" / "sleep-2026-11-30" / "tasks.json").read_text())
    by_split = {t["id"]: split for split, ts in frozen["skills"]["notes-app"].items() for t in ts}
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        await pilot.press("5")
        assert await wait_until(pilot, lambda: screen.loaded["tasks"] > 0, limit=250)
        assert screen.tasks.title == "night sleep-2026-11-30"
        assert {r.task.id: r.split for r in screen.tasks.rows} == by_split
        first = screen.tasks.rows[0]
        detail = str(screen.query_one("#mined-detail", Static).render())
        assert first.task.id in detail
        assert all(source.split()[0] in detail for source in first.sources)
        assert all(".jsonl" in s for s in first.sources)  # the night knows the transcripts
        before = screen.loaded["tasks"]
        await pilot.press("t")
        assert await wait_until(pilot, lambda: screen.loaded["tasks"] > before, limit=250)
        assert screen.tasks.title == "archive"
        archive = {r.task.id: r.split for r in screen.tasks.rows}
        assert archive == by_split  # the archive's splits are the night's
        assert all(
            task_split(r.task, val_fraction=0.3, test_fraction=0.0) == r.split
            for r in screen.tasks.rows
        )


async def test_run_a_night_now_end_to_end(world, tmp_path, monkeypatch):
    """`r` runs `skillopt sleep run` on the recorded settings (scripted double): its
    progress shows, and when it ends the night and its staged branch are on the screen."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the double is named by import path
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        assert "press r to run one" in str(screen.query_one("#nights-empty", Static).render())
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert app.night_launcher.alive or app.night_launcher.process is not None
        progress = screen.query_one("#night-progress", Static)
        assert progress.display and "night ▶" in str(progress.render())
        assert await wait_until(
            pilot,
            lambda: (
                not app.night_launcher.alive
                and screen.nights
                and screen.nights[0].status == "finished"
            ),
            limit=6000,  # up to 5 minutes on a loaded machine; a broken launcher still fails
            step=0.05,
        )
        assert app.night_launcher.process.returncode == 0, app.night_launcher.log_tail()
        rows = _cells(screen, "night-list")
        assert _names(rows[-1][0], f"staged/{rows[0][0]}-notes-app")

        def footer() -> str:
            return " ".join(str(k.render()) for k in screen.query("FooterKey"))

        # `x Stop night` went with the process, `r Run night` is back
        assert await wait_until(pilot, lambda: "Run night" in footer(), limit=250)
        assert "Stop night" not in footer()
    [branch] = SkillsRepo.open(world.skills).staged_branches()
    assert branch.skill == "notes-app"


async def test_a_handoff_night_stops_resumably_and_says_where_the_prompts_are(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    world = make_world(tmp_path, backend="handoff")
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "handoff (you answer the prompts)" in str(app.screen.body)
        assert "It may spend: nothing" in str(app.screen.body)
        await pilot.press("y")
        progress = screen.query_one("#night-progress", Static)
        assert await wait_until(
            pilot,
            lambda: not app.night_launcher.alive and "stopped" in str(progress.render()),
            limit=6000,  # up to 5 minutes on a loaded machine; a broken launcher still fails
            step=0.05,
        )
        assert app.night_launcher.process.returncode == 3
        text = str(progress.render())
        assert "press r to continue" in text and str(world.state / "nights") in text
        assert await wait_until(
            pilot, lambda: screen.nights and screen.nights[0].pending > 0, limit=3000
        )
        assert screen.nights[0].status == "waiting"


async def test_a_narrow_night_list_keeps_the_tail_of_long_names(world, night, tmp_path):
    app = _app(world, tmp_path)
    async with app.run_test(size=(60, 18)) as pilot:
        screen = await _open_sleep(pilot)
        await pilot.press("4")
        assert await wait_until(pilot, lambda: len(_cells(screen, "night-list")) == 3)
        branch = _cells(screen, "night-list")[-1][0].strip()
    assert branch.endswith("-notes-app") and "…" in branch, branch


async def test_r_asks_first_naming_the_backend_and_what_the_night_may_spend(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    world = make_world(tmp_path, backend="openai")
    config = json.loads(world.config.read_text())
    world.config.write_text(json.dumps({**config, "budget": {"max_cost_usd": 2.5}}))
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        body = str(app.screen.body)
        assert "Backend: openai" in body and "at most $2.5" in body
        assert app.night_launcher.process is None  # nothing runs before the answer
        await pilot.press("n")
        assert await wait_until(pilot, lambda: app.screen is screen)
    assert app.night_launcher.process is None


async def test_without_sleep_init_the_screen_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    app = SkillOptApp(tmp_path / "runs", None, refresh_runs=False, state_dir=tmp_path / "no-state")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        empty = str(screen.query_one("#nights-empty", Static).render())
        assert "skillopt sleep init --project PATH" in empty
        await pilot.press("r")
        assert app.night_launcher.process is None  # nothing started
        await pilot.press("2")
        assert "no new session" in str(screen.query_one("#sessions-empty", Static).render())
        await pilot.press("5")
        assert await wait_until(pilot, lambda: screen.loaded["tasks"] > 0, limit=250)
        assert "no tasks mined yet" in str(screen.query_one("#mined-empty", Static).render())
    assert not (tmp_path / "no-state").exists()  # the screen wrote nothing


async def test_every_key_is_in_the_footer_or_the_palette(world, tmp_path):
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        home = {c.title for c in app.get_system_commands(app.screen)}
        assert "Sleep (s)" in home
        screen = await _open_sleep(pilot)
        keys = ("Back", "Tabs", "Open", "Review", "Run night", "Refresh", "Help")

        def footer() -> str:
            return " ".join(
                str(k.render()) for k in screen.query(Footer).first().query("FooterKey")
            )

        # The footer fills in once the screen's bindings are composed (late when loaded).
        await wait_until(pilot, lambda: all(key in footer() for key in keys))
        for key in keys:
            assert key in footer()
        titles = {c.title for c in app.get_system_commands(screen)}
        assert {"Run night (r)", "Nights (4)", "Mined tasks (5)", "Review (v)"} <= titles
        await pilot.press("1")
        titles = {c.title for c in app.get_system_commands(screen)}
        assert "All/new (a)" in titles and "Review (v)" not in titles


async def test_a_branch_adopted_in_review_then_rolled_back_is_not_listed_as_staged(
    world, night, tmp_path
):
    staged = night["skills"]["notes-app"]["staged"]
    app = _app(world, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_sleep(pilot)
        branch, state = _cells(screen, "night-list")[2][:2]
        assert _names(branch, staged) and state == ""
        await pilot.press("down", "down", "enter")  # the branch row: Review
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        review = app.screen
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
        nights = screen.loaded["nights"]
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: screen.loaded["nights"] > nights, limit=250)
        assert _cells(screen, "night-list")[2][1] == "adopted"

        SkillsRepo.open(world.skills).rollback("notes-app")  # as from another terminal
        await pilot.press("g")
        assert await wait_until(
            pilot, lambda: _cells(screen, "night-list")[2][1] == "rolled back", limit=250
        )
        assert "nothing to review" in str(screen.query_one("#night-detail", Static).render())
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.screen is screen
        messages = " ".join(n.message for n in app._notifications)
        assert f"{staged} is rolled back since the night: nothing to review" in messages


LONG_SKILL = "customer-support-knowledge-portal"


@pytest.mark.parametrize("width", [80, 60])
async def test_the_nights_table_shows_its_val_column_whole(world, night, tmp_path, width):
    """A long skill name makes a long branch name (`staged/sleep-<date>-<skill>`): the
    branch is cut with … in its row, keeping its tail (whole in the detail below), the
    scores stay whole."""
    path = world.state / "nights" / "sleep-2026-11-30" / "night.json"
    data = json.loads(path.read_text())
    outcome = data["skills"].pop("notes-app")
    outcome["staged"] = f"staged/sleep-2026-11-30-{LONG_SKILL}"
    data["skills"][LONG_SKILL] = outcome
    path.write_text(json.dumps(data))
    scores = f"{outcome['baseline_val']:.2f} → {outcome['best_val']:.2f}"
    app = _app(world, tmp_path)
    async with app.run_test(size=(width, 24)) as pilot:
        screen = await _open_sleep(pilot)
        table = screen.query_one("#night-list", DataTable)
        await pilot.pause(0.1)
        assert _cells(screen, "night-list")[1][4] == scores
        assert table.virtual_size.width <= table.scrollable_content_region.width, (
            f"the table is {table.virtual_size.width} wide in {table.size.width} columns"
        )
        branch = _cells(screen, "night-list")[2][0]
        lead, cut, tail = branch.partition("…")
        assert cut and lead.strip() == "↳" and outcome["staged"].endswith(tail) and tail
        await pilot.press("down", "down")
        detail = str(screen.query_one("#night-detail", Static).render())
        assert outcome["staged"] in detail.replace("\n", "")


async def test_stopping_a_night_asks_first(world, tmp_path):
    """x stops a night started here only after Yes, as x on the Run screen."""
    app = _app(world, tmp_path)
    app.night_launcher.process = subprocess.Popen(["sleep", "30"])  # a live night standing in
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await _open_sleep(pilot)
            await pilot.press("x")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("n")
            assert await wait_until(pilot, lambda: app.screen is screen)
            await pilot.pause(0.2)
            assert app.night_launcher.alive
            await pilot.press("x")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("y")
            process = app.night_launcher.process
            assert await wait_until(pilot, lambda: process.poll() is not None)
        assert process.returncode == -signal.SIGINT
    finally:
        if app.night_launcher.process.poll() is None:
            app.night_launcher.process.kill()


async def test_a_long_header_message_is_not_cut_mid_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    world = make_world(tmp_path)
    (world.state / "sleep.yaml").write_text("max_tasks: 1\n", encoding="utf-8")  # under 2
    app = _app(world, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open_sleep(pilot)
        header = screen.query_one("#sleep-header", Static)
        said = screen.context.problem
        assert said.endswith("re-run skillopt sleep init") and len(said) > 116
        shown = " ".join(
            strip.text.strip()
            for strip in screen._compositor.render_strips()[header.region.y : header.region.bottom]
        )
    assert " ".join(said.split()) in " ".join(shown.split())
