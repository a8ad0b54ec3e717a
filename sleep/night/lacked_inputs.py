"""Failures that say nothing of the skill: the replay lacked what its item needs.

Why: the strong-model night's failure analyst was shown chat replays of code questions
that failed only because a chat replay had no code, and wrote a rule ("do not hedge, say
the likely answer") that traces to no correction. A replay lacks its inputs when the
files its session read could not be shown (sleep/night/read_files.py), when one of its
mined checks could not be applied to what the replay produced (a `ran` check with no
commands seen, a diff check on a chat reply), or when a command check did not run, or
when its session read the git history (`git log`) and its replay could not be given it
(sleep/night/history.py: no project to read it from, a command not re-run). An item that
failed with such a lack, and with nothing it was given failing (no check that was
applied failed, no command check failed), is marked (`RolloutResult.lacked_inputs`):
it still scores as it scored (the gate compares every skill on the same replays), but
the analysts are not shown it as a failure, and night.json lists it
(`left_out_of_analysis`).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from sleep.mine.tasks import Check
from sleep.night.replay_checks import CheckResult

# A task whose session read the git history ("summarise what changed this week" ran
# `git log`) whose replay could not be given it (sleep/night/history.py).
NO_HISTORY = (
    "its session read the project's git history, which the replay does not hold (it "
    "could not be taken up to the start commit, or the commands were not recorded)"
)


def lacked_inputs(lacking: list[str], untold: list[Check], commands: list[CheckResult]) -> str:
    """Why a failed replay lacked its inputs, one clause each ('' when it lacked none)."""
    reasons = [r for r in lacking if r]
    reasons += [f"its check {c.describe()} could not be applied to this replay" for c in untold]
    reasons += [r.line() for r in commands if r.status == "not-run"]
    return "; ".join(reasons)


def left_out_of_analysis(run_dir: Path) -> list[dict[str, Any]]:
    """{item, reason} for every train item a night's steps left out of the analysts'
    failures (the rollouts the analysts read, steps/*/rollouts.jsonl), each item once."""
    out: dict[str, str] = {}
    for log in sorted(Path(run_dir).glob("steps/*/rollouts.jsonl")):
        lines: list[str] = []
        with contextlib.suppress(OSError, UnicodeDecodeError):
            lines = log.read_text(encoding="utf-8").splitlines()
        for line in lines:
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if isinstance(row, dict) and row.get("lacked_inputs") and not row.get("hard"):
                    out.setdefault(str(row.get("item_id")), str(row["lacked_inputs"])[:300])
    return [{"item": item, "reason": reason} for item, reason in out.items()]


def left_out_line(skill: str, left_out: list[dict[str, Any]]) -> str:
    """One console line: how many failing items lacked their inputs (night.json says which)."""
    return (
        f"{skill}: {len(left_out)} failing item(s) lacked their inputs (e.g. the files a "
        "question's session read), so the analysts were not shown them as failures; "
        "night.json lists them under left_out_of_analysis"
    )
