"""Helpers for the TUI tests: the recorded runs, a real skills repo with one staged branch
of three hunks, a fixed-data double of the skills repo (for snapshots), bounded waits."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.skills_repo import (
    AdoptResult,
    CommitEvidence,
    Hunk,
    LogEntry,
    SkillEntry,
    SkillsRepo,
    StagedBranch,
    StagedDiff,
)

FIXTURES = Path(__file__).resolve().parent.parent / "skillopt_tui" / "fixtures"
RUNS = FIXTURES / "runs"
IDENTITY = ("SkillOpt Test", "test@example.invalid")

SKILL_V1 = """# Quiz skill

Answer the question asked.

## Format
- Keep answers short.
- Use plain text.

## Facts
- capital of France: Paris
- boiling point of water: 100 C
- speed of light: 299792 km/s
- highest mountain: Everest
- longest river: Nile
- smallest planet: Mercury
- chemical symbol of gold: Au

## Style
- Be polite.
- Do not guess.
"""

# three separate changes -> three hunks (with the default 3 lines of context)
SKILL_V2 = (
    SKILL_V1.replace("Answer the question asked.", "Answer exactly the question asked.")
    .replace(
        "- boiling point of water: 100 C\n",
        "- boiling point of water: 100 C\n- largest ocean: Pacific\n",
    )
    .replace("- Do not guess.\n", "- Do not guess; say you do not know.\n")
)


def make_skills_repo(path: Path, deploy_to: Path | None = None) -> SkillsRepo:
    """A real skills repo: skill `quiz` on main, and `staged/demo-finished` changing it in
    three places (hunks 1, 2, 3 in file order)."""
    repo = SkillsRepo.init(path, identity=IDENTITY)
    repo.add_skill("quiz", SKILL_V1, deploy_to=str(deploy_to) if deploy_to else None)
    repo.stage(
        "quiz",
        "demo-finished",
        SKILL_V2,
        subject="quiz: step 3 candidate (val 0.40→0.80)",
        trailers={
            "Run-Id": "demo-finished",
            "Step": "3",
            "Val-Before": "0.40",
            "Val-After": "0.80",
            "Items-Improved": "2",
            "Items-Regressed": "0",
            "Edits": "3",
        },
        body="1. replace: answers were too long\n2. append: facts the target lacked\n"
        "3. replace: it guessed instead of saying it did not know",
    )
    return repo


# a second staged branch of the same skill: one hunk, far from the first branch's hunk 1
SKILL_V3 = SKILL_V1.replace("- Use plain text.\n", "- Use plain text.\n- No emoji.\n")


def stage_second_branch(repo: SkillsRepo) -> None:
    """`staged/demo-second` (sorted after demo-finished): one hunk adding "- No emoji."."""
    repo.stage(
        "quiz",
        "demo-second",
        SKILL_V3,
        subject="quiz: step 1 candidate",
        trailers={"Run-Id": "demo-second", "Step": "1"},
        body="1. append: no emoji",
    )


# one branch whose hunk 1 holds two separate changes (`s` splits it) and whose hunk 2
# replaces a line and adds one (space chooses lines)
SKILL_SPLIT = (
    SKILL_V1.replace("Answer the question asked.", "Answer exactly the question asked.")
    .replace("- Use plain text.\n", "- Use plain text, no markdown.\n")
    .replace("- Do not guess.\n", "- Do not guess; say you do not know.\n- Cite a source.\n")
)


def stage_split_branch(repo: SkillsRepo) -> None:
    """`staged/demo-split`: hunk 1 = two blocks (changed lines 1-2 and 3-4); hunk 2 =
    changed lines 1 (-Do not guess.), 2 (+… say you do not know.), 3 (+Cite a source.)."""
    repo.stage(
        "quiz",
        "demo-split",
        SKILL_SPLIT,
        subject="quiz: step 2 candidate",
        trailers={"Run-Id": "demo-split", "Step": "2"},
        body="1. replace: sharper wording\n2. append: cite sources",
    )


class GatedRepo:
    """The real SkillsRepo with a gate on `diff`: while `gate` is clear, loading a staged
    diff waits, so a test can press keys while a diff is on its way (as a fast typist
    does on a slow disk). Everything else goes straight to the real repo."""

    def __init__(self, path: Path) -> None:
        self.repo = SkillsRepo.open(path, identity=IDENTITY)
        self.gate = threading.Event()
        self.gate.set()
        self.diffs_started = 0

    def diff(self, staged: str) -> Any:
        self.diffs_started += 1
        if not self.gate.wait(timeout=20):
            raise TimeoutError("test gate never opened")
        return self.repo.diff(staged)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.repo, name)


class SkillsRepoDouble:
    """Test double of core.skills_repo.SkillsRepo with fixed shas and dates, so snapshots
    of the review and history screens never change. Records the calls it gets."""

    def __init__(self, _path: Path | None = None) -> None:
        self.calls: list[tuple] = []
        self.hunks = [
            Hunk(
                1,
                "quiz/SKILL.md",
                "@@ -1,6 +1,6 @@",
                [
                    " # Quiz skill",
                    " ",
                    "-Answer the question asked.",
                    "+Answer exactly the question asked.",
                    " ",
                    " ## Format",
                ],
                1,
                1,
            ),
            Hunk(
                2,
                "quiz/SKILL.md",
                "@@ -10,6 +10,7 @@ ## Facts",
                [
                    " - capital of France: Paris",
                    " - boiling point of water: 100 C",
                    "+- largest ocean: Pacific",
                    " ",
                    " ## Style",
                ],
                1,
                0,
            ),
            Hunk(
                3,
                "quiz/SKILL.md",
                "@@ -14,3 +15,3 @@ ## Style",
                [" - Be polite.", "-- Do not guess.", "+- Do not guess; say you do not know."],
                1,
                1,
            ),
        ]

    def list_skills(self):
        return [
            SkillEntry("quiz", "quiz/SKILL.md", "~/.claude/skills/quiz/SKILL.md"),
            SkillEntry("review-notes", "review-notes/SKILL.md", None),
        ]

    def staged_branches(self):
        return [
            StagedBranch(
                "staged/demo-finished",
                "demo-finished",
                "quiz",
                2,
                "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
                "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567",
            )
        ]

    def diff(self, staged: str):
        self.calls.append(("diff", staged))
        return StagedDiff(
            staged,
            "quiz",
            self.hunks,
            [
                CommitEvidence(
                    "a1b2c3d4e5f6",
                    "quiz: step 3 candidate",
                    {
                        "Run-Id": "demo-finished",
                        "Step": "3",
                        "Val-Before": "0.40",
                        "Val-After": "0.80",
                        "Items-Improved": "2",
                        "Items-Regressed": "0",
                        "Val-Items": "5",
                        "Evidence": "p=0.5",  # 2 up, 0 down: 2 / 2^2
                        "Edits": "1",
                    },
                    "1. replace: answers were too long",
                ),
                CommitEvidence(
                    "b2c3d4e5f6a7",
                    "quiz: step 5 candidate",
                    {
                        "Run-Id": "demo-finished",
                        "Step": "5",
                        "Val-Before": "0.80",
                        "Val-After": "1.00",
                        "Edits": "1",
                    },
                    "1. append: facts the target lacked",
                ),
            ],
        )

    def adopt(self, staged: str, hunks=None, force: bool = False, lines=None):
        self.calls.append(("adopt", staged, hunks) + ((lines,) if lines else ()))
        return AdoptResult(
            "c0ffee0000000000000000000000000000000000",
            "~/.claude/skills/quiz/SKILL.md",
            hunks or [1, 2, 3],
        )

    def reject(self, staged: str) -> str:
        self.calls.append(("reject", staged))
        return "rejected/demo-finished"

    def log(self, skill=None):
        return [
            LogEntry(
                "d00d000000000000000000000000000000000001",
                "Adopt 2 hunks of staged/demo-1",
                "adopt",
                {
                    "Skillopt-Op": "adopt",
                    "Skill": "quiz",
                    "Adopted-From": "staged/demo-1 a1b2c3d",
                    "Hunks": "1,3",
                },
                "2026-11-20T10:00:00+00:00",
                "SkillOpt Test",
            ),
            LogEntry(
                "e1e1e1e000000000000000000000000000000002",
                "Add skill quiz",
                "add",
                {"Skill": "quiz"},
                "2026-11-19T09:00:00+00:00",
                "SkillOpt Test",
            ),
        ]

    def show(self, commit: str) -> str:
        return (
            "--- a/quiz/SKILL.md\n+++ b/quiz/SKILL.md\n@@ -1,3 +1,3 @@\n # Quiz skill\n"
            "-Answer the question asked.\n+Answer exactly the question asked.\n"
        )

    def part_marks(self, staged: str, parts=()):
        return {}  # main has not moved since staging: no part is on it or clashes with it

    def adoption_hunks(self, target=None):
        return self.hunks[:1]

    def live_adoption_hunks(self, target=None) -> list[int]:
        return [h.index for h in self.adoption_hunks(target)]

    def rollback(self, target=None, force: bool = False, hunks=None) -> str:
        self.calls.append(("rollback", target) + ((hunks,) if hunks else ()))
        return "beef000000000000000000000000000000000000"


PATIENCE = 10


async def wait_until(
    pilot, condition: Callable[[], bool], limit: int = 100, step: float = 0.02
) -> bool:
    """Polls `condition` between short pauses, at most `limit` times: a broken app fails
    the test instead of hanging it, and nothing asserts on elapsed time."""
    # PATIENCE stretches every wait on a loaded machine (CI shares two cores): a healthy
    # app passes at the first polls, a broken one still fails, only later.
    for _ in range(limit * PATIENCE):
        if condition():
            return True
        await pilot.pause(step)
    return condition()


def copy_run(runs: Path, name: str, *, drop_gates: tuple[int, ...] = (), steps: int | None = None):
    """A copy of the recorded `demo-finished` run as `runs/name`: without the step gates in
    `drop_gates` (steps that had no candidate), and with only its first `steps` steps
    (0: a run whose baseline is scored and no step has ended)."""
    import json
    import shutil

    run = runs / name
    shutil.copytree(RUNS / "demo-finished", run)
    events = run / "events.jsonl"
    kept = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        step = event.get("step")
        if event.get("type") == "GateDecided" and step in drop_gates:
            continue
        if steps is not None and isinstance(step, int) and step > steps:
            continue
        if steps is not None and event.get("type") in ("RunFinished", "FinalSkillChecked"):
            continue
        kept.append(line)
    events.write_text("\n".join(kept) + "\n")
    return run


def run_app(run: Path):
    """The app opened on the run directory `run` (its folder as the runs directory), with
    the skills repo double: the Run screen alone, polling fast."""
    from skillopt_tui.app.app import SkillOptApp

    return SkillOptApp(
        run.parent,
        run.parent / "no-such-repo",
        run=run,
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
    )


def split_repo(path: Path) -> SkillsRepo:
    """A real skills repo with `quiz` on main and a staged branch whose hunk splits in parts."""
    repo = SkillsRepo.init(path, identity=IDENTITY)
    repo.add_skill("quiz", SKILL_V1)
    stage_split_branch(repo)
    return repo


async def open_review(pilot):
    """Press v on Home and wait until Review has loaded its branches."""
    from skillopt_tui.app.screens.review import ReviewScreen

    await pilot.press("v")
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, ReviewScreen) and pilot.app.screen.loaded > 0
    )
    return pilot.app.screen
