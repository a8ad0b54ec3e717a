"""A task's split depends on what the person asked, not on where the project lives: the
same sessions read from two checkouts hold out the same requests (the recipes corpus,
copied into a fresh temporary folder each run, held out 1 of 5 preference occurrences in
one run and 5 of 5 in the next)."""

from __future__ import annotations

from sleep.mine.heuristic import mine_sessions
from sleep.mine.split import task_split
from sleep.night.held_out import preference_splits

FRACTIONS = {"val_fraction": 0.3, "test_fraction": 0.1}
REQUESTS = [
    f"write a {noun} helper in {module}.py that handles {case}"
    for noun, module, case in [
        ("slugify", "text", "accents"),
        ("retry", "net", "timeouts"),
        ("csv export", "report", "empty rows"),
        ("cache", "store", "expiry"),
        ("date parser", "when", "time zones"),
        ("config loader", "settings", "missing keys"),
        ("pager", "listing", "the last page"),
        ("rate limiter", "gate", "bursts"),
        ("diff printer", "show", "binary files"),
        ("backup", "archive", "symlinks"),
        ("tokenizer", "lex", "unicode quotes"),
        ("scheduler", "cron", "leap days"),
    ]
]


def _sessions(folder: str) -> list[dict]:
    return [
        {
            "source": "claude" if i % 2 else "codex",
            "session_id": f"session-{i}",
            "cwd": folder,
            "automation": False,
            "tasks": [
                {
                    "text": text,
                    "timestamp": f"2026-12-0{1 + i % 5}T10:00:00Z",
                    "aborted": False,
                    "answer": "Done: added it with a test.",
                },  # fmt: skip
                {
                    "text": "no, use the standard library instead of requests",
                    "answer": "Done.",
                    "timestamp": f"2026-12-0{1 + i % 5}T10:05:00Z",
                    "aborted": False,
                },  # fmt: skip
            ],
        }
        for i, text in enumerate(REQUESTS)
    ]


def _splits_by_request(folder: str) -> tuple[dict[str, str], dict[str, str]]:
    tasks = mine_sessions(_sessions(folder))
    hashed = {t.intent: task_split(t, **FRACTIONS) for t in tasks}
    gated = preference_splits(tasks, **FRACTIONS)
    return hashed, {t.intent: gated[t.id] for t in tasks}


def test_the_same_sessions_in_another_checkout_hold_out_the_same_requests():
    here = _splits_by_request("/home/ana/code/recipe-box")
    there = _splits_by_request("/tmp/pytest-of-ci/pytest-7/test_corpus0/recipe-box")
    assert len(here[0]) == len(REQUESTS)
    assert set(here[0].values()) >= {"train", "val"}  # the hash does split them
    assert here == there
