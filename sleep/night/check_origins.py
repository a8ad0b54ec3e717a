"""Which preference each mechanical check of a task was mined from.

Why: a task corrected twice ("tests with every change" and "raise, don't return None")
carries both preferences' checks, and a check that flips under a candidate is evidence
only for the edit addressing the preference it came from (issue 37: the UTC rule was kept
because the add-a-test check flipped). The task keeps its checks and its corrections but
not which produced which, so the corrections are read again the way mining read them
(sleep/mine/correction_checks.py) and each check they imply is tied to the preferences
that correction belongs to. A check the miner model wrote in its own words (`def test_`)
is tied to the preferences whose corrections on that task share a word with its pattern;
one that shares none stays of unknown origin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sleep.mine.correction_checks import checks_for
from sleep.mine.preferences import Preference
from sleep.mine.structural_checks import structural_checks
from sleep.mine.tasks import MinedTask


def check_origins(
    tasks: Iterable[MinedTask], preferences: Iterable[Preference]
) -> dict[str, dict[str, frozenset[str]]]:
    """task id → check description → the ids of the preferences whose corrections on
    that task imply the check (only checks the task holds)."""
    by_task = {t.id: t for t in tasks}
    out: dict[str, dict[str, set[str]]] = {}
    words: dict[tuple[str, str], set[str]] = {}  # (task, preference) -> its words there
    for pref in preferences:
        for o in pref.occurrences:
            task = by_task.get(o.task)
            if task is None:
                continue
            held = {c.describe() for c in task.checks}
            said = [c for c in task.corrections if (c.session, c.date) == (o.session, o.date)]
            for check in _implied(task, [c.text for c in said]):
                if check in held:
                    out.setdefault(task.id, {}).setdefault(check, set()).add(pref.id)
            for c in said:
                words.setdefault((task.id, pref.id), set()).update(_stems(c.text, *c.needs))
    implied = {t: set(checks) for t, checks in out.items()}
    for (task_id, pref_id), stems in words.items():
        for check in by_task[task_id].checks:  # the miner model's own wording of a check
            unknown = check.describe() not in implied.get(task_id, ())
            if unknown and _stems(check.value) & stems:
                out.setdefault(task_id, {}).setdefault(check.describe(), set()).add(pref_id)
    return {t: {c: frozenset(p) for c, p in checks.items()} for t, checks in out.items() if checks}


def _stems(*texts: str) -> set[str]:
    """The words of `texts` (a check's pattern, a correction) cut to four letters, so
    `def test_` meets "tests with every change" and `return None` "instead of returning"."""
    return {w[:4] for t in texts for w in re.findall(r"[a-z]{3,}", t.lower())} - _COMMON


_COMMON = frozenset({"the", "and", "not", "add", "its", "with", "any", "all", "thx", "pls"})


def _implied(task: MinedTask, texts: Iterable[str]) -> set[str]:
    agentic = task.kind == "agentic"
    commands = [c.value for c in task.checks if c.kind == "command"]
    out = set()
    for text in texts:
        found = checks_for(text, agentic=agentic, commands_after=commands)
        found += structural_checks(text, None, agentic=agentic)
        out |= {c.describe() for c in found}
    return out
