"""Review against a real skills repo with two staged branches: what the confirm dialog shows
is exactly what is adopted, however fast keys come while a diff is loading; hunks an
earlier partial adopt put on main show as adopted."""

from __future__ import annotations

from pathlib import Path

from core.skills_repo import SkillsRepo
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.review import ReviewScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.evidence_panel import EvidencePanel
from tests.support.tui_app import (
    IDENTITY,
    SKILL_V1,
    SKILL_V2,
    SKILL_V3,
    GatedRepo,
    stage_second_branch,
    wait_until,
)


def _two_branches(skills_repo: Path) -> None:
    stage_second_branch(SkillsRepo.open(skills_repo, identity=IDENTITY))


def _gated_app(runs_dir: Path, skills_repo: Path) -> tuple[SkillOptApp, list[GatedRepo]]:
    made: list[GatedRepo] = []

    def factory(path: Path) -> GatedRepo:
        made.append(GatedRepo(path))
        return made[-1]

    app = SkillOptApp(
        runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05, repo_factory=factory
    )
    return app, made


async def _open_review(pilot) -> ReviewScreen:
    await pilot.press("v")
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, ReviewScreen) and pilot.app.screen.loaded > 0
    )
    return pilot.app.screen


def _main(skills_repo: Path) -> SkillsRepo:
    return SkillsRepo.open(skills_repo, identity=IDENTITY)


async def test_keys_during_a_branch_switch_adopt_nothing_unseen(runs_dir, skills_repo):
    _two_branches(skills_repo)
    app, made = _gated_app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _open_review(pilot)
        assert review.diff.branch == "staged/demo-finished" and len(review.diff.hunks) == 3
        gated = made[0]
        gated.gate.clear()  # the next diff takes its time
        await pilot.press("right_square_bracket", "a", "A", "y")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, ConfirmDialog)
        assert review.diff is None and review.check_action("adopt", ()) is None
        assert _main(skills_repo).read_skill("quiz") == SKILL_V1  # nothing adopted
        gated.gate.set()
        assert await wait_until(pilot, lambda: review.diff is not None, limit=250)
        assert review.diff.branch == "staged/demo-second" and len(review.diff.hunks) == 1
        await pilot.press("a", "A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "staged/demo-second" in str(app.screen.body)
        await pilot.press("y")
        assert await wait_until(
            pilot, lambda: _main(skills_repo).log("quiz")[0].kind == "adopt", limit=250
        )
    repo = _main(skills_repo)
    assert repo.read_skill("quiz") == SKILL_V3
    assert repo.log("quiz")[0].trailers["Adopted-From"].startswith("staged/demo-second ")
    assert [b.name for b in repo.staged_branches()] == ["staged/demo-finished"]


async def test_adopt_right_after_a_reject_waits_for_the_next_diff(runs_dir, skills_repo):
    _two_branches(skills_repo)
    app, made = _gated_app(runs_dir, skills_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _open_review(pilot)
        gated = made[0]
        gated.gate.clear()
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "staged/demo-finished" in str(app.screen.body)
        await pilot.press("y")
        # the reject is done and the next branch's diff is on its way (held at the gate)
        assert await wait_until(pilot, lambda: gated.diffs_started >= 2, limit=250)
        await pilot.press("a", "A")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, ConfirmDialog)
        assert _main(skills_repo).read_skill("quiz") == SKILL_V1
        gated.gate.set()
        assert await wait_until(pilot, lambda: review.diff is not None, limit=250)
        assert review.diff.branch == "staged/demo-second"
    repo = _main(skills_repo)
    assert repo.read_skill("quiz") == SKILL_V1
    assert [b.name for b in repo.staged_branches()] == ["staged/demo-second"]


async def test_hunks_already_adopted_show_as_adopted(runs_dir, skills_repo):
    _main(skills_repo).adopt("staged/demo-finished", [1])
    app = SkillOptApp(runs_dir, skills_repo, refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await _open_review(pilot)
        assert review.diff.branch == "staged/demo-finished"
        assert [h.on_main for h in review.diff.hunks] == [True, False, False]
        assert review.decisions == {1: "adopted", 2: "pending", 3: "pending"}
        evidence = str(review.query_one(EvidencePanel)._body.render())
        assert "? 2" in evidence and "on main 1" in evidence
        await pilot.press("y")  # hunk 1 is on main: not decided, moves on
        assert review.decisions[1] == "adopted" and review.current == 1
        await pilot.press("a")
        assert review.decisions == {1: "adopted", 2: "approved", 3: "approved"}
        assert review.state.selection() == ([2, 3], {})
        await pilot.press("A")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "2 of 3 hunks" in str(app.screen.body)
        await pilot.press("y")
        assert await wait_until(pilot, lambda: review.loaded > 1, limit=250)
    repo = _main(skills_repo)
    assert repo.read_skill("quiz") == SKILL_V2
    assert repo.log("quiz")[0].trailers["Hunks"] == "2,3"
    assert repo.staged_branches() == []  # main holds the whole staged text: archived
