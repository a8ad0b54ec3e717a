"""A replay's command checks, run once per piece of work and counted once.

Why: a handoff night replays its items again on every round (each round reads the answers
written since), and the answered replays come back with the same final message and the
same workspace diff. Running their checks again costs up to `sleep.check_timeout_s` each,
every round, and logging them again made the night's tally count one check per round
(8 replays with checks reported `not-run: 16`).

The key is the work the checks judge: the task, the skill version it was replayed with,
its commands and the workspace's diff as the answer was read. The night's checks log
(`<night>/checks/<skill>.jsonl`) is the memo: one line per key, so a resumed night finds
what an earlier run computed, and `replay_checks.tally` counts each piece of work once.
A runner that cannot tell the diff before its checks run (a coding agent's own fresh
workspace, gone after the run) runs them; its results are still logged once per key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sleep.night.replay_checks import CheckResult, checks_for, log_entries


def work_key(item_id: str, skill_text: str, commands: list[str], diff: str) -> str:
    identity = [item_id, hashlib.sha256(skill_text.encode()).hexdigest(), commands, diff]
    return hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()[:24]


class CheckMemo:
    """The night's checks log, read as a memo of results by key (no log: nothing kept)."""

    def __init__(self, path: Path | None) -> None:
        self.path = Path(path) if path is not None else None

    def get(self, key: str) -> list[CheckResult] | None:
        for entry in log_entries(self.path):
            if entry.get("key") == key:
                try:
                    return [CheckResult.from_dict(r) for r in entry.get("checks", [])]
                except TypeError:  # a line of some other shape: not this memo's
                    return None
        return None

    def record(self, key: str, item_id: str, results: list[CheckResult]) -> None:
        """Add one piece of work's results, unless the log has them already."""
        if self.path is None or not results or self.get(key) is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"item": item_id, "key": key, "checks": [r.to_dict() for r in results]}
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry, ensure_ascii=False) + "\n")


@dataclass(frozen=True)
class MemoCheck:
    """The `AgentTask.check` of one replay: `check(workspace)` runs the commands;
    `check.of_diff(diff)` is the same check for work whose diff is known, which a runner
    that read the diff first uses (sleep/night/handoff_workspace.py, sleep/night/replay_tools.py)."""

    memo: CheckMemo
    item_id: str
    skill_text: str
    commands: list[str]
    timeout_s: float
    project: Path | None = None  # whose toolchain the checks run with (not in the key)

    def __call__(self, workspace: Path) -> list[CheckResult]:
        return checks_for(self.commands, self.timeout_s, self.project)(workspace)

    def of_diff(self, diff: str) -> Callable[[Path], list[CheckResult]]:
        key = self.key(diff)

        def check(workspace: Path) -> list[CheckResult]:
            found = self.memo.get(key)
            if found is not None:
                return found
            results = self(workspace)
            self.memo.record(key, self.item_id, results)
            return results

        return check

    def key(self, diff: str) -> str:
        return work_key(self.item_id, self.skill_text, self.commands, diff)


def for_diff(check: Callable[[Path], Any], diff: str) -> Callable[[Path], Any]:
    """The check a runner calls once it has the diff: kept by diff where it is a replay's
    `MemoCheck`, else the check itself (an environment's own check has no memo)."""
    return check.of_diff(diff) if isinstance(check, MemoCheck) else check
