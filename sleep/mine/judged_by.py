"""What a mined task's replies are judged by, as the optimizer's prompts show it.

Why its own text: the judge reads the rubric with the accepted answer after it (one
block, sleep/night/replay_env.py `task_item`), but an analyst shown that block as a "reference
answer" reads the person's correction as an answer, and the accepted answer once more in
the evaluator's line. Here each part is one line under its own name: the rubric, each
correction the person made (sleep/mine/heuristic.py writes them into the rubric, marked with
`CORRECTION_NOTE`), and the answer they accepted.
"""

from __future__ import annotations

from core.clean_text import clean_text
from sleep.mine.tasks import MinedTask

CORRECTION_NOTE = "The person had to correct an earlier answer: "


def correction_note(text: str) -> str:
    """A correction as the rubric keeps it: one line (the quoting escapes line breaks; a
    lone surrogate is U+FFFD first, so the judge never reads Python's `\\ud83d`)."""
    return f"{CORRECTION_NOTE}{clean_text(text[:500])!r}"


def judged_by(task: MinedTask) -> str:
    rubric, corrections = [], []
    for line in task.rubric.splitlines():
        if line.startswith(CORRECTION_NOTE):
            corrections.append(line[len(CORRECTION_NOTE) :])
        elif line.strip():
            rubric.append(line.strip())
    lines = [f"rubric: {' '.join(rubric)}"] if rubric else []
    lines += [f"the person's correction of an earlier answer: {c}" for c in corrections]
    if task.reference:
        lines.append(f"the answer the person accepted in their session: {task.reference}")
    return "\n".join(lines) or "rubric: (none: the reply is judged against the request)"
