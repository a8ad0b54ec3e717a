"""The autonomous learning rate on the Run screen: each step's decision (applied of pool,
confidence, reasoning) in a Learning rate tab and in the candidate's title, replayed from
a recorded run and followed live as events arrive; a fixed-rate run shows none of it.
The recorded run is tests/skillopt_tui/fixtures/autonomous_runs/demo-autonomous (written
by make_fixtures.py); snapshots regenerate with `pytest --snapshot-update <this file>`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.run.events import LearningRateDecided
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.diff_view import DiffView
from skillopt_tui.app.widgets.help_screen import HelpScreen
from skillopt_tui.app.widgets.lr_log import LearningRateLog
from tests.support.tui_app import FIXTURES, RUNS, SkillsRepoDouble, wait_until

AUTONOMOUS = FIXTURES / "autonomous_runs" / "demo-autonomous"


def _app(run: Path, **kw) -> SkillOptApp:
    app = SkillOptApp(
        run.parent, run.parent / "no-such-repo", run=run, refresh_runs=False, poll_interval=0.05,
        repo_factory=SkillsRepoDouble, **kw,
    )  # fmt: skip
    app.animation_level = "none"
    return app


async def _loaded(pilot, steps: int = 6) -> RunScreen:
    app = pilot.app
    assert await wait_until(
        pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.steps_done == steps
    )
    await pilot.pause(0.1)
    return app.screen


def _lines(log: LearningRateLog) -> list[str]:
    return [line.text.rstrip() for line in log.lines]


def _tab_shown(screen: RunScreen) -> bool:
    return not screen.query_one("#run-tabs").get_tab("lr").has_class("-hidden")


async def test_replay_shows_every_steps_decision_in_the_learning_rate_tab():
    app = _app(AUTONOMOUS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _loaded(pilot)
        assert _tab_shown(screen)
        await pilot.press("4")
        assert screen.query_one("#run-tabs").active == "lr"
        log = screen.query_one(LearningRateLog)
        assert log.seen == 6  # one per step, the 0s included
        text = "\n".join(_lines(log))
        assert "step 1 · apply 2 of 4 · confidence high" in text
        assert "the two format edits are independent" in text
        assert "risks: The one-line rule may cut answers that need a unit." in text
        assert "step 3 · apply 0 of 3 · no candidate this step · confidence low" in text
        assert "step 4 · apply 3 of 3 (asked 5) · confidence medium" in text
        assert "step 6 · apply 0 of 2 · no candidate this step · unusable reply" in text
        assert "no JSON object in the reply" in text


async def test_the_candidate_title_carries_its_steps_learning_rate():
    app = _app(AUTONOMOUS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _loaded(pilot)
        await pilot.press("3")  # the newest candidate: step 5 (step 6 chose none)
        diff = screen.query_one(DiffView)
        assert await wait_until(pilot, lambda: "step 5" in diff.text())
        assert (
            "learning rate apply 1 of 2 · confidence low: A small try. · 4 in full" in diff.text()
        )
        await pilot.press("comma", "comma")  # step 2 (step 3 has no candidate)
        assert "step 2" in diff.text()
        assert "learning rate apply 1 of 2" not in diff.text()
        assert "apply 1 of 3 · confidence medium: Only the digits edit" in diff.text()


async def test_a_fixed_rate_run_has_no_learning_rate_tab_nor_key():
    app = _app(RUNS / "demo-finished")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _loaded(pilot)
        assert not _tab_shown(screen) and not screen.lr
        await pilot.press("4")
        await pilot.pause()
        assert screen.query_one("#run-tabs").active == "rollouts"
        await pilot.press("3")
        assert "learning rate" not in screen.query_one(DiffView).text()
        await pilot.press("question_mark")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        names = {str(cell) for cell in app.screen.table.columns[1].cells}
        assert "Candidate" in names and "Learning rate" not in names


async def test_a_live_run_shows_each_decision_as_it_arrives(tmp_path):
    run = tmp_path / "runs" / "demo-partial"
    shutil.copytree(RUNS / "demo-partial", run)  # two fixed steps so far, no decision
    app = _app(run)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _loaded(pilot, steps=2)
        assert not _tab_shown(screen)
        decision = LearningRateDecided(
            step=3, count=1, pool=5, asked=1, confidence="medium", reasoning="one rule first"
        )
        with (run / "events.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(decision.to_dict()) + "\n")
        assert await wait_until(pilot, lambda: _tab_shown(screen))
        await pilot.press("4")
        log = screen.query_one(LearningRateLog)
        assert await wait_until(pilot, lambda: log.seen == 1)
        assert "step 3 · apply 1 of 5 · confidence medium" in _lines(log)
        assert "one rule first" in _lines(log)


@pytest.mark.parametrize(
    "size", [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
)
def test_snapshot_learning_rate_tab(snap_compare, size):
    async def before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("4")
        await pilot.pause(0.1)

    assert snap_compare(_app(AUTONOMOUS), terminal_size=size, run_before=before)


def test_snapshot_candidate_with_its_learning_rate(snap_compare):
    async def before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("3")
        await pilot.pause(0.1)

    assert snap_compare(_app(AUTONOMOUS), terminal_size=(80, 24), run_before=before)
