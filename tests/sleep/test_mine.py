"""The heuristic miner on hostile prompts: the path pattern is linear and finds what the
old pattern found, and a prompt of megabytes is read only as far as the miner needs."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sleep.mine import heuristic as mine
from sleep.mine.heuristic import _PATH, mine_sessions, shape_of
from tests.sleep.bounded import run_bounded

# The pattern before it was made linear: the reference for which paths it finds.
QUADRATIC_PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+")


@settings(max_examples=3000)
@given(st.text(alphabet="ab1./- _~é,:'\"", max_size=40))
def test_the_linear_path_pattern_finds_the_same_paths(text):
    assert _PATH.sub("<path>", text) == QUADRATIC_PATH.sub("<path>", text)


def test_shapes_of_ordinary_requests():
    assert shape_of("Fix the bug in ~/src/app/main.py line 42") == "fix the bug in <path> line #"
    assert shape_of("compare ./a/b.txt with ../c/d") == "compare <path> with <path>"


def test_a_megabyte_word_run_is_shaped_in_bounded_time():
    # 16 KB took 0.9 s with the quadratic pattern, so 1 MB took about an hour.
    code = (
        "from sleep.mine.heuristic import shape_of\n"
        "for run in ('a' * 1_000_000, 'a~' * 500_000, 'a.' * 500_000, '~a/' * 300_000):\n"
        "    print(shape_of(run).split()[0])"
    )
    assert run_bounded(code).split() == ["a" * 1_000_000, "a", "a", "a"]


def test_three_fifteen_megabyte_prompts_are_mined_in_bounded_time():
    code = (
        "from sleep.mine.heuristic import mine_sessions\n"
        "big = 'please summarise this log ' + 'x' * 15_000_000\n"
        "session = {'source': 'claude', 'session_id': 's', 'cwd': '/p',\n"
        "           'tasks': [{'text': big + str(i)} for i in range(3)]}\n"
        "print(len(mine_sessions([session])))"
    )
    assert run_bounded(code).strip() == "1"  # one shape: the three differ only past the cap


def test_the_miner_reads_a_prompt_only_up_to_its_cap():
    cap = mine.MAX_MINED_CHARS
    long = "explain this stack trace " + "y" * (cap * 3)
    [task] = mine_sessions([{"source": "claude", "session_id": "s", "tasks": [{"text": long}]}])
    assert task.intent == long[: len(task.intent)] and len(task.intent) <= cap
