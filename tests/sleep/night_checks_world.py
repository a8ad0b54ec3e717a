"""A project whose person's sessions ran `make test` (test support for the nights whose
mined command checks run in the replay workspace).

The project: calc.py's `total()` does not skip None, and `make test` (a unittest in
test_calc.py) fails until it does. Each session asks, for one part of the project, to make
total() skip None values; the assistant edited the code, ran `make test`, and the person
said thanks (so the answer is the task's reference). The parts are picked so that the
tasks fall at least twice into train and twice into val, whatever the temporary path."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from sleep.mine.split import split_key, split_of
from tests.sleep.night_double import NAMES

PROMPT = "for {part}: make total() in calc.py skip None values"
ANSWER = "total() in calc.py now skips None values; make test passes."
MAKEFILE = "test:\n\tpython3 -m unittest -q test_calc\n"
TESTS = (
    "import unittest\nfrom calc import total\n\n\n"
    "class TotalTest(unittest.TestCase):\n"
    "    def test_skips_none(self):\n"
    "        self.assertEqual(total([1, None, 2]), 3)\n"
)
BROKEN = "def total(xs):\n    return sum(xs)\n"
FIXED = "def total(xs):\n    return sum(x for x in xs if x is not None)\n"
# What a replay that claims the fix but gets it wrong writes (make test still fails).
WRONG = "def total(xs):\n    # skips None values\n    return sum(xs)\n"


def git(project: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(project.parent), "PATH": "/usr/bin:/bin"}
    ident = ["-c", "user.name=Dev", "-c", "user.email=dev@example.com"]
    done = subprocess.run(
        ["git", "-C", str(project), *ident, *args], env=env, check=True, capture_output=True
    )
    return done.stdout.decode()


def make_project(root: Path) -> Path:
    """The project as a git repository at its first commit, plus uncommitted work."""
    project = root / "project"
    project.mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# Calc\n\nKeep answers short.\n")
    (project / "Makefile").write_text(MAKEFILE)
    (project / "test_calc.py").write_text(TESTS)
    (project / "calc.py").write_text(BROKEN)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    (project / "scratch.txt").write_text("work in progress\n")  # must stay out of replays
    return project


def parts_for(project: Path, n: int = 4) -> list[str]:
    def split(part: str) -> str:
        return split_of(split_key(PROMPT.format(part=part)), val_fraction=0.3, test_fraction=0.0)

    val = [p for p in NAMES if split(p) == "val"][:2]
    train = [p for p in NAMES if split(p) == "train"][:2]
    assert len(val) == 2 and len(train) == 2, "pick more NAMES"
    return (val + train)[:n]


def sessions(project: Path, parts: list[str], command: str = "make test") -> list[dict[str, Any]]:
    return [
        {
            "source": "claude",
            "session_id": f"s{i}",
            "cwd": str(project),
            "branch": "main",
            "file": f"/x/{i}.jsonl",
            "automation": False,
            "tasks": [
                {
                    "text": PROMPT.format(part=part),
                    "timestamp": None,
                    "aborted": False,
                    "answer": ANSWER,
                    "tools": ["Read", "Edit", "Bash"],
                    "commands": [command],
                },
                {"text": "thanks", "timestamp": None, "aborted": False},
            ],
        }
        for i, part in enumerate(parts)
    ]


def part_of(text: str, parts: list[str]) -> str | None:
    return next((p for p in parts if PROMPT.format(part=p) in text), None)


def replayed_items(run_dir: Path) -> list[dict[str, Any]]:
    """Every rollout the run recorded (steps' and the gate's), from its JSONL files."""
    import json

    rows = []
    for path in sorted(run_dir.rglob("*rollouts.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if isinstance(row, dict) and "item_id" in row and "soft" in row:
                rows.append(row)
    return rows


class JudgeSaysFixed:
    """TEST DOUBLE for the scripted roles of a checks night: the judge gives every reply
    0.9 (every replay claims the fix), so only a check can tell the replays apart; the
    optimizer and anything else are the night's Brain (tests/sleep/night_double.py)."""

    def __init__(self) -> None:
        from tests.sleep.night_double import Brain

        self.brain = Brain()

    def __call__(self, request) -> str:
        import json

        from core.models.scripted import last_user_text

        if "You are grading one reply" in last_user_text(request):
            return json.dumps({"score": 0.9, "reason": "the reply says total() is fixed"})
        return self.brain(request)


def judge_says_fixed() -> JudgeSaysFixed:
    """Load by import path: `{backend: scripted, model: "tests.sleep.night_checks_world:judge_says_fixed"}`."""
    return JudgeSaysFixed()
