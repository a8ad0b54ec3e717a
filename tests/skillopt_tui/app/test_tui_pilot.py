"""Pilot tests of the app against the recorded runs and a real skills repo."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from core.run.events import GateDecided, StepFinished
from core.skills_repo import DirtyTree, SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.history import HistoryScreen
from skillopt_tui.app.screens.home import HomeScreen
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.diff_view import DiffView
from skillopt_tui.app.widgets.gate_log import GateLog
from skillopt_tui.app.widgets.help_screen import HelpScreen
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from skillopt_tui.app.widgets.score_chart import ScoreChart
from skillopt_tui.app.widgets.trajectory_screen import TrajectoryScreen
from tests.support.tui_app import IDENTITY, SKILL_V1, SkillsRepoDouble, make_skills_repo, wait_until


def _app(runs_dir: Path, skills: Path | None = None, **kw) -> SkillOptApp:
    return SkillOptApp(runs_dir, skills, refresh_runs=False, poll_interval=0.05, **kw)


async def test_open_recorded_run_navigate_and_open_trajectory(runs_dir):
    app = _app(runs_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, HomeScreen) and len(app.screen.runs) == 3
        )
        names = [r.run_id for r in app.screen.runs]
        for _ in range(names.index("demo-finished")):
            await pilot.press("down")
        await pilot.press("enter")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        screen = app.screen
        table = screen.query_one(RolloutsTable)
        assert table.row_count == 5 + 6 * (4 + 5)  # baseline + per step (train + gate)
        assert [p.step for p in screen.query_one(ScoreChart).points] == [1, 2, 3, 4, 5, 6]
        assert screen.query_one(GateLog).row_count == 6
        assert screen.status.status == "finished" and screen.status.best_val == 1.0

        await pilot.press("3")
        assert screen.query_one("#run-tabs").active == "candidate"
        body = str(screen.query_one(DiffView)._body.render())
        assert "+- Prefer the most common name of a place." in body
        await pilot.press("1")
        table.focus()
        table.move_cursor(row=5)  # rows 0-4 are the baseline; 5 is step 1, first train item
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, TrajectoryScreen))
        modal = app.screen
        assert modal.rollout.item_id == "q-train-01" and modal.rollout.step == 1
        assert modal.record is not None and modal.record["trajectory"][0]["role"] == "user"
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_review_adopts_exactly_hunks_1_and_3(runs_dir, tmp_path, skills_repo):
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        review = app.screen
        assert len(review.diff.hunks) == 3
        await pilot.press("y", "n", "y")  # approve 1, reject 2, approve 3 (auto-advance)
        assert review.decisions == {1: "approved", 2: "rejected", 3: "approved"}
        await pilot.press("A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        summary = str(app.screen.body)
        assert "2 of 3 hunks" in summary and "largest ocean" not in summary
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)

    # the same adoption made directly through the repository API, on an identical repo
    expected_repo = make_skills_repo(tmp_path / "expected")
    expected_repo.adopt("staged/demo-finished", [1, 3])
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    adopted = repo.read_skill("quiz")
    assert adopted == expected_repo.read_skill("quiz")
    assert "Answer exactly the question asked." in adopted
    assert "say you do not know" in adopted and "largest ocean" not in adopted
    assert repo.log("quiz")[0].kind == "adopt"
    assert (tmp_path / "deployed" / "SKILL.md").read_text(encoding="utf-8") == adopted


async def test_history_rolls_back_an_adoption(runs_dir, tmp_path, skills_repo):
    repo = SkillsRepo.open(skills_repo, identity=IDENTITY)
    repo.adopt("staged/demo-finished", None)
    assert repo.read_skill("quiz") != SKILL_V1
    app = _app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("h")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded > 0
        )
        history = app.screen
        assert history.entries[0].kind == "adopt"
        await pilot.press("d")
        assert await wait_until(
            pilot, lambda: "largest ocean" in history.query_one(DiffView).text()
        )
        await pilot.press("R")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(pilot, lambda: history.loaded > 1, limit=250)
        assert history.entries[0].kind == "rollback"
    assert SkillsRepo.open(skills_repo).read_skill("quiz") == SKILL_V1
    assert (tmp_path / "deployed" / "SKILL.md").read_text(encoding="utf-8") == SKILL_V1


def _append(path: Path, *events) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for event in events:
            fh.write(json.dumps(event.to_dict()) + "\n")


async def test_follows_a_run_whose_log_grows(copied_run):
    app = _app(copied_run.parent, run=copied_run)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.steps_done == 2
        )
        screen = app.screen
        events = copied_run / "events.jsonl"
        _append(
            events,
            GateDecided(
                step=3,
                accepted=True,
                best_before=0.6,
                candidate_score=0.8,
                items_scored=5,
                items_total=5,
                rollouts_saved=0,
            ),
        )
        # a torn line: the writer is mid-append; it must not break or be lost
        with events.open("a", encoding="utf-8") as fh:
            fh.write('{"type": "StepFinished", "step": 3, ')
        # bounded: 50 pauses of 20 ms, about one second of polling at 50 ms
        assert await wait_until(pilot, lambda: screen.query_one(GateLog).row_count == 3, limit=50)
        with events.open("a", encoding="utf-8") as fh:
            fh.write(
                '"epoch": 1, "train_hard": 0.5, "train_soft": 0.5, "best_val": 0.8, '
                '"accepted": true, "edit_budget": 2, "ts": 1795000100.0}\n'
            )
        assert await wait_until(pilot, lambda: screen.steps_done == 3, limit=50)
        assert [p.step for p in screen.query_one(ScoreChart).points] == [1, 2, 3]
        _append(
            events,
            StepFinished(
                step=4,
                epoch=2,
                train_hard=0.5,
                train_soft=0.5,
                best_val=0.8,
                accepted=False,
                edit_budget=2,
            ),
        )
        assert await wait_until(pilot, lambda: screen.steps_done == 4, limit=50)
        assert screen.status.status == "interrupted"  # no process holds the run's lock


async def test_palette_offers_every_screen_action(runs_dir):
    app = _app(runs_dir, Path("double"), repo_factory=SkillsRepoDouble)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for label in (
            "Move (j/k)",
            "Previous hunk (k)",
            "Approve (y)",
            "Reject (n)",
            "All (a)",
            "Adopt (A)",
            "Reject branch (r)",
            "Help (?)",
        ):
            assert label in titles, titles
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "All (a)")
        await command.callback()
        assert set(app.screen.decisions.values()) == {"approved"}
        await pilot.press("question_mark")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = [str(cell) for cell in app.screen.table.columns[1].cells]
        assert {"Approve", "Reject", "Adopt", "Reject branch", "Move"} <= set(keys)
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))


class _DirtyRepo(SkillsRepoDouble):
    def adopt(self, staged, hunks=None, force=False):
        raise DirtyTree(
            "the skills repo has uncommitted changes in quiz/SKILL.md; commit or stash them first"
        )


async def test_adopt_error_is_a_notification_not_a_crash(runs_dir):
    app = _app(runs_dir, Path("double"), repo_factory=_DirtyRepo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("v")
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loaded > 0
        )
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        assert await wait_until(
            pilot, lambda: any("uncommitted changes" in n.message for n in app._notifications)
        )
        assert isinstance(app.screen, ReviewScreen) and app.is_running


TAKES_SIGINT = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); time.sleep(30)"


def _signal_state(pid: int) -> str:
    """SigBlk/SigIgn/SigCgt of a process, for a failure message (a CI run once saw SIGINT
    leave the stand-in running)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as exc:
        return f"unreadable ({exc})"
    return ", ".join(line for line in lines if line.startswith(("SigBlk", "SigIgn", "SigCgt")))


async def test_quit_while_a_launched_run_is_live_can_stop_it(runs_dir):
    app = _app(runs_dir)
    # stands in for the launched trainer: a real child process that SIGINT ends. Like the
    # trainer it takes SIGINT itself: a parent started in the background without job
    # control passes SIGINT down ignored (a clean-clone run launched so saw SigIgn 0x80000007)
    app.launcher.process = subprocess.Popen([sys.executable, "-c", TAKES_SIGINT])

    def dialog_ready() -> bool:  # its keys bound and its buttons mounted (not just pushed)
        return isinstance(app.screen, ConfirmDialog) and len(app.screen.query("Button")) == 3

    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("q")
            assert await wait_until(pilot, dialog_ready)
            await pilot.press("c")  # cancel: nothing happens
            assert await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
            assert app.launcher.alive
            await pilot.press("q")
            assert await wait_until(pilot, dialog_ready)
            await pilot.press("s")
            # the dialog's answer runs on a later turn of the app's loop: leaving the test
            # app before it ran would close the app without stopping anything
            assert await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
            process = app.launcher.process
            assert await wait_until(pilot, lambda: process.poll() is not None), (
                f"SIGINT did not end the child; its signal state: {_signal_state(process.pid)}"
            )
        assert app.launcher.process.returncode == -signal.SIGINT
    finally:
        if app.launcher.process.poll() is None:
            app.launcher.process.kill()
